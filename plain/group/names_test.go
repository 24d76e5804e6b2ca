package group

import "testing"

// The names of children and pods, and the job-key label value, that Identities,
// Labels, Coordinator.Value and Validate build on.
func TestNames(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{name: "child name", got: childName("train", "workers", 3), want: "train-workers-3"},
		{name: "pod hostname", got: podHostname("train", "workers", 3, 0), want: "train-workers-3-0"},
		{name: "job key is the hex SHA-1 of namespace/name", got: jobKey("default", "train-workers-3"),
			want: "99667fbb09790b7ce409ab3d26ca48a6d840b2e0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
