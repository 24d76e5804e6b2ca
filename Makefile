# The test command of this repository is `make test` (see README.md).
FUZZTIME ?= 3s

.PHONY: test bench fuzz fmt demo

test:
	FUZZTIME=$(FUZZTIME) ./hack/test.sh

# Runs a Job to completion on the in-memory cluster and prints its progress. Pass
# DEMOFLAGS="--kubeconfig ~/.kube/config" to run it on a real cluster.
demo:
	cd examples && go run ./demo $(DEMOFLAGS)

bench:
	@for m in $$(./hack/modules.sh); do (cd $$m && go test -run='^$$' -bench=. -benchmem ./...) || exit 1; done

fuzz:
	./hack/fuzz.sh $(FUZZTIME)

fmt:
	gofmt -w $$(git ls-files --cached --others --exclude-standard '*.go')
