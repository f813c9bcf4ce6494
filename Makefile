# arrowagg: make build | run | test | bench | bench-cpu | fuzz | fuzz-short | testdata | clean
# GPU: make kernels | cuda | ladder | gpu-bin (need the CUDA toolkit; see README.md)

GO ?= go

.PHONY: build run test bench bench-cpu testdata clean kernels cuda ladder gpu-bin fuzz fuzz-short

## build: the command, into bin/arrowagg
build:
	$(GO) build -o bin/arrowagg ./cmd/arrowagg

## run: build, then aggregate testdata/ on the CPU and print the table
run: build
	./bin/arrowagg --device cpu testdata/

## test: gofmt check, go vet, every test with the race detector, the
## engine's property tests again without it (under it, their largest arrays
## are of one type: see engine's bigSizes; the grouped result's test of every
## type likewise takes seven types under it), dataset's largest combinatorial
## tests again without it (under it they take every other case: raceSubset;
## TestRaceSubsetsRunInFull checks that each test taking one is listed here),
## then the Arrow Go v18 front end's tests (module arrow18, generated
## from the v17 one) without the race detector: its engine's tests are the
## v17 engine's and its other packages start no goroutine of their own, the
## concurrent code they call (engine/core, the backends) is the one the race
## detector ran above, and building arrow-go v18 a second time for it took
## over a minute of CI; then a capped run of the fuzz targets on their seed
## corpora (fuzz-short)
ENGINE_PROPERTY_TESTS = ^(TestPropertyAgainstOracle|TestOrderedAggregates|TestGroupResultDirectColumns)$$
DATASET_FULL_TESTS = ^(TestPagePathStreamsMatchWholePages|TestStreamedPageErrorsMatchWholePages|TestStreamCancelStopsWithinAPiece|TestIPCFileInPlaceMatchesStream|TestIPCFileTruncatedWhileRead|TestGroupIPCInPlace|TestGroupRowGroupWindows|TestGroupRowGroupWindowsPageIndex|TestGroupTruncatedWhileRead|TestPagePathSegments)$$
test:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files need formatting:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./... ./testdata/gen
	$(GO) test -race -timeout 30m ./...
	$(GO) test -run '$(ENGINE_PROPERTY_TESTS)' ./engine
	$(GO) test -run '$(DATASET_FULL_TESTS)' ./dataset
	cd arrow18 && $(GO) vet ./... && $(GO) test ./...
	cd bench && $(GO) vet ./internal/... ./cmd/ipcgen && $(GO) test -race ./internal/... ./cmd/ipcgen
	$(MAKE) fuzz-short

## bench: the Go benchmarks of the main module, briefly
bench:
	$(GO) test -run '^$$' -bench . -benchtime 200ms ./...

## bench-cpu: arrowagg against DuckDB on a generated Parquet file (bench/ module)
bench-cpu:
	bash scripts/bench-cpu.sh

## fuzz: run each fuzz target of FUZZ_TARGETS (PACKAGE:TARGET, or
## PACKAGE:TARGET:TAGS for one built with tags; default: every one of
## dataset/, the grouped partial states, the WHERE parser, the snappy
## decoder, and the GPU's snappy and page kernels and page route emulated
## on the CPU)
## for FUZZTIME, one after the other, the test processes capped at
## FUZZ_AS bytes of address space (ARROWAGG_TEST_LIMIT_AS, set by the test
## binary itself; a fuzzing process takes about 2.5 GiB of it unprovoked):
## an input that makes a reader allocate gigabytes is a crash, not a pass
FUZZTIME ?= 10m
FUZZ_AS ?= 4294967296
FUZZ_TARGETS ?= dataset:FuzzDetect dataset:FuzzParquet dataset:FuzzParquetGroup dataset:FuzzColumnIndex dataset:FuzzIPCFile \
	dataset:FuzzIPCStream dataset:FuzzHybrid \
	agg:FuzzUnmarshalState engine:FuzzGroupStates filter:FuzzParse internal/snappy:FuzzDecode internal/emugpu:FuzzUnsnap:emu internal/emugpu:FuzzPageKernels:emu \
	dataset:FuzzGPURoute:emu
fuzz:
	@for pt in $(FUZZ_TARGETS); do \
		p=$${pt%%:*}; t=$${pt#*:}; tags=; \
		case $$t in *:*) tags=$${t#*:}; t=$${t%%:*};; esac; \
		echo "== $$p $$t $$tags"; \
		ARROWAGG_TEST_LIMIT_AS=$(FUZZ_AS) $(GO) test -tags "$$tags" ./$$p -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 0 -timeout 0 || exit 1; \
	done

## fuzz-short: every fuzz target of dataset/ on its seed corpus (the
## project's inputs and every failing input fuzzing found, testdata/fuzz),
## capped as in fuzz: deterministic, so CI runs it through make test; the
## exploration that finds new inputs is make fuzz
fuzz-short:
	ARROWAGG_TEST_LIMIT_AS=$(FUZZ_AS) $(GO) test ./dataset -count=1 -run "^Fuzz"

## testdata: regenerate testdata/ and its golden outputs
testdata:
	$(GO) run ./testdata/gen testdata
	$(GO) test ./cmd/arrowagg -run '^TestGolden$$' -update

## clean: remove what the build made
clean:
	rm -rf bin gpu-bin

## kernels: regenerate kernels/policy.go from kernels/policy.h, then the PTX
## and the fatbins (SASS for sm_70..sm_90 and the PTX) of the CUDA kernels
## (CUDA toolkit; about three minutes on two cores)
kernels:
	$(GO) generate ./kernels
	bash scripts/gen-ptx.sh

## cuda: the command with the CUDA backend, into bin/arrowagg-cuda
cuda:
	$(GO) build -tags cuda -o bin/arrowagg-cuda ./cmd/arrowagg

## ladder: the reduction ladder's command, into bin/arrowagg-ladder (cuda build)
ladder:
	$(GO) build -tags cuda -o bin/arrowagg-ladder ./cmd/arrowagg-ladder

## gpu-bin: the binaries a GPU host without Go runs, into gpu-bin/
## (there: scripts/gpu-check.sh, scripts/startup-check.sh)
gpu-bin:
	bash scripts/gpu-build.sh
