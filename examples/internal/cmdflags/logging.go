package cmdflags

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// Log formats of --logging-format, the flag name and values of the Kubernetes
// components (kube-controller-manager says --logging-format=json too).
const (
	// FormatText is klog's text format, the default.
	FormatText = "text"
	// FormatJSON writes one JSON object per line (log/slog's JSON handler): "time",
	// "msg" and the key/value pairs, with "v" (the verbosity n of a V(n) line) on info
	// lines and "level":"error" on errors, as the Kubernetes components' JSON format.
	FormatJSON = "json"
)

// format is the flag.Value of --logging-format.
type format struct{ v *string }

func (f format) String() string {
	if f.v == nil {
		return FormatText
	}
	return *f.v
}

func (f format) Set(s string) error {
	switch s {
	case FormatText, FormatJSON:
		*f.v = s
		return nil
	}
	return fmt.Errorf("%q: must be %q or %q", s, FormatText, FormatJSON)
}

// RegisterLogFormat adds --logging-format to fs; the value read after fs.Parse is
// FormatText or FormatJSON.
func RegisterLogFormat(fs *flag.FlagSet) *string {
	v := FormatText
	fs.Var(format{&v}, "logging-format", `log format: "text" (klog's) or "json" (one object per line)`)
	return &v
}

// NewLogger returns the logger of a command for the --logging-format value and the
// verbosity (-v), and makes klog (client-go's logs) write through it, so that one
// format holds for every line. Text is klog's own logger; JSON goes to out.
func NewLogger(logFormat string, verbosity int, out io.Writer) (logr.Logger, error) {
	switch logFormat {
	case FormatText, "":
		return klog.NewKlogr(), nil
	case FormatJSON:
		// logr maps V(n) to the slog level -n: the handler passes every line of
		// verbosity up to -v.
		h := slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.Level(-verbosity), ReplaceAttr: levelAttr})
		logger := logr.FromSlogHandler(h)
		klog.SetLogger(logger)
		return logger, nil
	}
	return logr.Discard(), fmt.Errorf("--logging-format=%q: must be %q or %q", logFormat, FormatText, FormatJSON)
}

// Verbosity returns the value of the -v flag registered on fs (klog's or
// textlogger's), 0 when there is none or it does not parse.
func Verbosity(fs *flag.FlagSet) int {
	f := fs.Lookup("v")
	if f == nil {
		return 0
	}
	n, err := strconv.Atoi(f.Value.String())
	if err != nil {
		return 0
	}
	return n
}

// levelAttr writes slog's level as the Kubernetes JSON format does: "v" for info
// lines (logr's V(n) arrives as the level -n), "level":"error" for errors.
func levelAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 || a.Key != slog.LevelKey {
		return a
	}
	lvl, ok := a.Value.Any().(slog.Level)
	if !ok {
		return a
	}
	if lvl >= slog.LevelError {
		return slog.String("level", "error")
	}
	if lvl > slog.LevelInfo {
		return slog.String("level", lvl.String())
	}
	return slog.Int("v", int(slog.LevelInfo-lvl))
}
