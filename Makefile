# goslurm build entry points. Binaries take Slurm's names: the last element of each
# main package's import path (commands/scontrol -> bin/scontrol).

GO        ?= go
BIN       ?= bin
FUZZTIME  ?= 10s
STATICCHECK_VERSION ?= v0.8.2

MAIN_PKGS = $(shell $(GO) list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v /internal/)

.PHONY: all build test bench fuzz lint clean

all: build

build:
	@mkdir -p $(BIN)
	@for p in $(MAIN_PKGS); do \
		echo "go build -o $(BIN)/$${p##*/} $$p"; \
		$(GO) build -o $(BIN)/$${p##*/} $$p || exit 1; \
	done

# Unit and integration tests. Tests that need real Slurm 22.05 or munge skip with a
# reason when those are missing, unless GOSLURM_REQUIRE_ORACLE=1 (set by .ci/run).
#
# testsuite/interop (real daemons, mostly waiting on them) is the long pole, so it runs
# as five shards beside the other packages. The tests that put real or our slurmd under
# cgroups (suspend, slurmd jobs, --pty) stay in one shard (the rest): concurrent clusters
# use the same node names and job ids, hence the same cgroup paths. INTEROP_C holds
# controller tests whose clusters run real slurmd under task/none, INTEROP_D and INTEROP_E more of them.
INTEROP_A = ^(TestScancelMutations|TestScontrolMutations|TestSlurmctldSubmitChecksDiff|TestSlurmctldBackup|TestCommandsBackup|TestSlurmctldResync|TestSlurmctldPriority|TestSlurmctldPartition|TestSlurmctldReconfigure|TestQueryJSONDiff|TestSlurmctldQueryJSON|TestSinfoReservationDiff|TestSrunKillOnBadExit|TestSlurmctldGeometry|TestSlurmctldReboot|TestSlurmctldStepUpdate|TestSlurmctldLicenses|TestJobInfoAfterRestart|TestCtldRefusalMessages|TestSprio|TestScontrolResize|TestCancelRPCsBetweenControllers|TestScancelWholeArray)
INTEROP_C = ^(TestSlurmctldLateRefusal|TestSlurmctldUnholdableDiff|TestSlurmctldCoreSpecDiff|TestSlurmctldMail|TestSlurmctldPrologSlurmctld|TestSlurmctldPrologEpilogSlurmctld|TestSlurmctldJobComp|TestSlurmctldHooksNodeFail|TestSlurmctldPreempt|TestSlurmctldStepNodes|TestGoslurmStepNodes|TestSlurmctldPlanned|TestSlurmctldBFLicenses|TestSlurmctldAllowZeroLic|TestSlurmctldSdiag|TestSlurmctldAdmin|TestSlurmctldWarnSignal|TestSlurmctldDeadline|TestSlurmctldAfterCorr|TestSlurmctldSbcast|TestSlurmctldPrologFlags|TestSlurmctldStepLimit|TestSlurmctldStepAlloc)
INTEROP_D = ^(TestSlurmctldGres|TestSlurmctldHetJob|TestSlurmctldResv|TestSlurmctldPowerSave|TestSrunHet)
INTEROP_E = ^(TestSlurmctldNoKill|TestHetAlloc|TestSlurmctldRequeue|TestSlurmctldImmediate|TestSlurmctldEpilogSlurmctldRestart|TestSlurmctldTrigger|TestSlurmctldCloudNodes|TestSlurmctldDownNodeCompleting)
test: build
	$(GO) vet ./...
	@$(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v '/testsuite/interop$$') & a=$$!; \
	$(GO) test -count=1 -timeout 45m -run '$(INTEROP_A)' ./testsuite/interop & b=$$!; \
	$(GO) test -count=1 -timeout 45m -run '$(INTEROP_C)' ./testsuite/interop & c=$$!; \
	$(GO) test -count=1 -timeout 45m -run '$(INTEROP_D)' ./testsuite/interop & d=$$!; \
	$(GO) test -count=1 -timeout 45m -run '$(INTEROP_E)' ./testsuite/interop & e=$$!; \
	$(GO) test -count=1 -timeout 45m -skip '$(INTEROP_A)|$(INTEROP_C)|$(INTEROP_D)|$(INTEROP_E)' ./testsuite/interop & f=$$!; \
	rc=0; for p in $$a $$b $$c $$d $$e $$f; do wait $$p || rc=1; done; exit $$rc

bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

# A short, bounded run of every fuzz target (FUZZTIME each).
fuzz:
	@for p in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			echo "== $$p $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$p || exit 1; \
		done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

clean:
	rm -rf $(BIN)

# A private cluster on loopback as the current user (no root, no munge): our
# slurmctld, four slurmd and sackd under a temporary directory, a short
# showcase, then the cluster stays up. `. bin/demo.env` to use it.
.PHONY: demo demo-stop
demo: build
	@bash contrib/demo/demo.sh start "$(abspath $(BIN))" "$(abspath $(BIN))/demo.env"

demo-stop:
	@bash contrib/demo/demo.sh stop "$(abspath $(BIN))/demo.env"
