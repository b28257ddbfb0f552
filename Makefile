# vcuda top-level Makefile.
#
#   make            build everything (release, into build/release)
#   make demo       install what it needs, build, run the demo
#   make check      install what it needs, build every variant, run every CPU test
#   make bench      build and run the benchmarks
#   make test-gpu   the GPU suite (on a machine with an NVIDIA GPU)
#
# Variants build out of tree: VARIANT=release|asan|tsan|fuzz -> build/$(VARIANT).

VARIANT ?= release
BUILD   := build/$(VARIANT)

ifeq ($(VARIANT),fuzz)
CC      := clang
endif
CC      ?= cc

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CSTD    := -std=c11 -D_GNU_SOURCE -D__CUDA_API_VERSION_INTERNAL
OPT     := -O2 -g
SANITIZE :=
ifeq ($(VARIANT),asan)
OPT      := -O1 -g -fno-omit-frame-pointer
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all
endif
ifeq ($(VARIANT),tsan)
OPT      := -O1 -g
SANITIZE := -fsanitize=thread
endif
ifeq ($(VARIANT),fuzz)
OPT      := -O1 -g -fno-omit-frame-pointer
SANITIZE := -fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-sanitize-recover=all
endif

CUDA_HOME ?= /usr/local/cuda
INC     := -Ishared -Ihost-backend/include -Ihost-backend -Iguest-lib -Iguest-lib/libcuda -I$(BUILD)/gen \
           -isystem $(CUDA_HOME)/include
CFLAGS  += $(CSTD) $(WARN) $(OPT) $(SANITIZE) $(INC) -fPIC -MMD -MP
LDFLAGS += $(SANITIZE)
LDLIBS  += -lpthread

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
# subunit linked statically: the Check suites also run on the GPU machine
# (make test-gpu), which has no libsubunit.so.0.
CHECK_LIBS   := $(patsubst -lsubunit,-l:libsubunit.a,$(shell pkg-config --libs check 2>/dev/null))

SHARED_SRC := shared/vc_layout.c shared/vc_ring_host.c shared/vc_ring_guest.c shared/vc_sock.c \
              shared/vc_copy.c shared/vc_vm.c shared/vc_fill.c shared/vc_gpin.c
# host-backend/, one folder per concern (docs/ARCHITECTURE.md): the session
# core, the CUDA executor and the resources it charges make the server library;
# the CI stand-in for the driver is a library of its own; server/ is the
# vcuda-server program around them.
SERVER_SRC  := $(sort $(wildcard host-backend/core/*.c host-backend/cuda/*.c host-backend/resources/*.c \
                              host-backend/nvml/*.c))
STANDIN_SRC := $(sort $(wildcard host-backend/standin/*.c))
PROGRAM_SRC := $(sort $(wildcard host-backend/server/*.c))
CLIENT_SRC := guest-lib/vc_client.c guest-lib/vc_crew.c guest-lib/vc_dev.c guest-lib/vc_place.c guest-lib/vc_thread.c
EXPTAB_SRC := guest-lib/libcuda/exptab.c guest-lib/libcuda/exptab_cluster.c guest-lib/libcuda/exptab_nvvm.c \
              guest-lib/libcuda/jitcache.c guest-lib/libcuda/md2.c guest-lib/libcuda/cls.c
LIBCUDA_SRC := guest-lib/libcuda/core.c guest-lib/libcuda/entry.c guest-lib/libcuda/ctx.c \
               guest-lib/libcuda/module.c guest-lib/libcuda/launch.c guest-lib/libcuda/memory.c \
               guest-lib/libcuda/hostfn.c guest-lib/libcuda/stream.c guest-lib/libcuda/pinned.c \
               guest-lib/libcuda/pool.c guest-lib/libcuda/names.c guest-lib/libcuda/capture.c guest-lib/libcuda/capcopy.c guest-lib/libcuda/graph.c \
               guest-lib/libcuda/graph_nodes.c guest-lib/libcuda/graph_topo.c guest-lib/libcuda/graph_host.c \
               guest-lib/libcuda/console.c \
               guest-lib/libcuda/refused.c guest-lib/libcuda/legacy.c guest-lib/libcuda/link.c \
               guest-lib/libcuda/managed.c guest-lib/libcuda/managed_fault.c \
               guest-lib/libcuda/memops.c guest-lib/libcuda/tensormap.c guest-lib/libcuda/occupancy.c \
               guest-lib/libcuda/legacy_launch.c guest-lib/libcuda/devctx.c \
               guest-lib/libcuda/array.c guest-lib/libcuda/copy3d.c \
               guest-lib/libcuda/hostreg.c guest-lib/libcuda/aside.c guest-lib/libcuda/pinspare.c \
               $(EXPTAB_SRC) $(CLIENT_SRC) $(SHARED_SRC)
LIBCUDA_SRC += guest-lib/libcuda/vmm.c guest-lib/libcuda/ipc.c
LIBCUDA_SRC += guest-lib/libcuda/legacy_array.c guest-lib/libcuda/memmisc.c
LIBCUDA_SRC += guest-lib/libcuda/texref.c
LIBCUDA_SRC += guest-lib/libcuda/green.c guest-lib/libcuda/logs.c
LIBCUDA_SRC += guest-lib/libcuda/stats.c guest-lib/libcuda/fastpath.c
LIBCUDA_SRC += guest-lib/libcuda/profile.c
LIBCUDA_SRC += guest-lib/libcuda/pinseg.c guest-lib/libcuda/pinguest.c
LIBCUDA_SRC += guest-lib/libcuda/fatbin.c
LIBCUDA_GEN := vc_cuda_guest_gen vc_cuda_exports_gen vc_cuda_unsup_gen vc_cuda_errors_gen
LIBCUDA_GEN += vc_cuda_opnames_gen
# The guest's libnvidia-ml.so.1 (guest-lib/nvml): NVML over the same
# transport client; every NVML entry point it does not serve is a generated
# NOT_SUPPORTED stub (tools/gen/gen_nvml.py).
NVML_SRC := guest-lib/nvml/nvml.c guest-lib/nvml/device.c guest-lib/nvml/values.c guest-lib/nvml/internal.c guest-lib/nvml/events.c guest-lib/nvml/confcompute.c

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIBSHARED := $(BUILD)/lib/libvcshared.a
LIBSERVER := $(BUILD)/lib/libvcserver.a
LIBSTANDIN := $(BUILD)/lib/libvcstandin.a
LIBCLIENT := $(BUILD)/lib/libvcclient.a
LIBEXPTAB := $(BUILD)/lib/libvcexptab.a
ABI_HASH  := $(BUILD)/gen/vc_abi_hash.h
LIBCUDA   := $(BUILD)/guest/libcuda.so.1
LIBNVML   := $(BUILD)/guest/libnvidia-ml.so.1

SERVER_BIN := $(BUILD)/bin/vcuda-server
UNIT_TESTS := $(BUILD)/tests/test_ring $(BUILD)/tests/test_decode $(BUILD)/tests/test_threads \
              $(BUILD)/tests/test_exptab $(BUILD)/tests/test_handles $(BUILD)/tests/test_image \
              $(BUILD)/tests/test_fill $(BUILD)/tests/test_fatbin $(BUILD)/tests/test_crew \
              $(BUILD)/tests/test_guestmem $(BUILD)/tests/test_optimes $(BUILD)/tests/test_place \
              $(BUILD)/tests/test_fdbroker
INTEG_BINS := $(BUILD)/tests/stress_client $(BUILD)/tests/bad_client $(BUILD)/demo/vcuda-demo \
              $(BUILD)/tests/test_vm_link $(BUILD)/vm/vm_guest_test $(BUILD)/vm/runas
BENCH_BINS := $(BUILD)/bench/ring_bench
FUZZ_BINS  := $(BUILD)/fuzz/fuzz_decode $(BUILD)/fuzz/fuzz_handshake $(BUILD)/fuzz/fuzz_vm_frame \
              $(BUILD)/fuzz/fuzz_guestmem

ifeq ($(VARIANT),fuzz)
ALL := $(FUZZ_BINS)
else ifeq ($(VARIANT),tsan)
ALL := $(BUILD)/tests/test_threads $(BUILD)/tests/test_crew
else ifeq ($(VARIANT),release)
ALL := $(SERVER_BIN) $(UNIT_TESTS) $(INTEG_BINS) $(BENCH_BINS) $(LIBCUDA) $(BUILD)/tests/test_cuda_api $(BUILD)/tests/test_cuda_objects $(BUILD)/tests/test_managed \
       $(LIBNVML) $(BUILD)/tests/test_nvml \
       $(BUILD)/tests/test_quota $(BUILD)/tests/gpushare_load $(BUILD)/tests/test_arrays $(BUILD)/tests/test_graphs $(BUILD)/tests/test_hostile_api
ALL += $(BUILD)/tests/test_pinned $(BUILD)/guest/libvcuda-profile.so
else
ALL := $(SERVER_BIN) $(UNIT_TESTS) $(INTEG_BINS) $(BENCH_BINS) $(LIBCUDA) $(LIBNVML) $(BUILD)/tests/test_cuda_api \
       $(BUILD)/tests/test_cuda_objects $(BUILD)/tests/test_managed $(BUILD)/tests/test_arrays $(BUILD)/tests/test_graphs \
       $(BUILD)/tests/test_pinned
endif

.PHONY: all build asan tsan fuzz check demo bench bench-tools test-gpu test-workloads unit integration clean setup cudart-smoke qemu vm-test coverage
all build: $(ALL)

# ---- generated CUDA API layer (tools/gen) and the ABI hash -----------------------
GEN_INPUTS := tools/gen/gen_cuda.py tools/gen/cuda_api.py tools/gen/procaddr.tsv tools/gen/errors.tsv \
              tests/data/devprofile-h200.tsv \
              tools/gen/libcuda.symbols tools/gen/driver_extra.txt
GEN_STAMP  := $(BUILD)/gen/.stamp
ABI_FILES  := shared/vc_wire.h shared/vc_cuda_manual.h shared/vc_cuda_array.h $(GEN_INPUTS)
ABI_FILES  += shared/vc_cuda_vmm.h shared/vc_gpin.h
ABI_FILES  += shared/vc_cuda_graph.h
ABI_FILES  += shared/vc_cuda_memmisc.h
ABI_FILES  += shared/vc_cuda_texref.h
ABI_FILES  += shared/vc_cuda_green.h
ABI_FILES  += shared/vc_nvml_wire.h

GEN_FILES  := $(addprefix $(BUILD)/gen/,vc_cuda_wire.h vc_cuda_driver_gen.h vc_cuda_manual_gen.h \
              vc_cuda_host_gen.c vc_cuda_guest_gen.c vc_cuda_exports_gen.c vc_cuda_unsup_gen.c \
              vc_cuda_errors_gen.c vc_cuda_driver_unsup_gen.c vc_devprofile_gen.c vc_cuda_opnames_gen.c)

$(GEN_STAMP): $(GEN_INPUTS)
	@mkdir -p $(@D)
	python3 tools/gen/gen_cuda.py --cuda-include $(CUDA_HOME)/include --out $(BUILD)/gen
	@touch $@

$(GEN_FILES): $(GEN_STAMP)
	@:

# docs/driver-coverage.md: every exported symbol's disposition (make check
# verifies it is up to date, and that no symbol falls into the catch-all).
coverage:
	python3 tools/gen/gen_coverage.py --cuda-include $(CUDA_HOME)/include --out docs/driver-coverage.md

# The hash changes whenever anything that shapes the wire changes.
$(ABI_HASH): $(ABI_FILES)
	@mkdir -p $(@D)
	@h=$$(cat $(ABI_FILES) | sha256sum | cut -c1-16); \
	 printf '/* generated from the wire ABI sources */\n#define VC_ABI_HASH 0x%sull\n' $$h > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c $(ABI_HASH) $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(ABI_HASH) $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/tests/unit/%.o: CFLAGS += $(CHECK_CFLAGS)

$(LIBSHARED): $(call obj,$(SHARED_SRC) shared/vc_log.c) $(BUILD)/obj/gen/vc_cuda_opnames_gen.o
$(LIBSERVER): $(call obj,$(SERVER_SRC)) $(BUILD)/obj/gen/vc_cuda_host_gen.o
$(LIBSTANDIN): $(call obj,$(STANDIN_SRC)) $(BUILD)/obj/gen/vc_cuda_driver_unsup_gen.o $(BUILD)/obj/gen/vc_devprofile_gen.o
$(LIBCLIENT): $(call obj,$(CLIENT_SRC))
$(LIBEXPTAB): $(call obj,$(EXPTAB_SRC))
$(BUILD)/lib/%.a:
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# The guest's libcuda.so.1: the driver API, over the transport client.
$(LIBCUDA): $(call obj,$(LIBCUDA_SRC)) $(patsubst %,$(BUILD)/obj/gen/%.o,$(LIBCUDA_GEN)) \
            guest-lib/libcuda/libcuda.map
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=guest-lib/libcuda/libcuda.map \
		-Wl,-z,defs -o $@ $(filter %.o,$^) $(LDLIBS)
	ln -sf libcuda.so.1 $(@D)/libcuda.so

# The same sampling profiler alone (profile.c), to preload into a native
# run: VCUDA_PROFILE's figures natively and through vcuda, compared.
$(BUILD)/guest/libvcuda-profile.so: $(call obj,guest-lib/libcuda/profile.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libvcuda-profile.so -Wl,-z,defs -o $@ $^ $(LDLIBS)

# The guest's libnvidia-ml.so.1: NVML over the transport client. Its
# exports and NOT_SUPPORTED stubs come from the entry-point list and the
# hand-written objects.
NVML_OBJ := $(call obj,$(NVML_SRC))
NVML_GEN_STAMP := $(BUILD)/gen/.nvml-stamp
$(NVML_GEN_STAMP): tools/gen/gen_nvml.py guest-lib/nvml/nvml.symbols $(NVML_OBJ)
	python3 tools/gen/gen_nvml.py --symbols guest-lib/nvml/nvml.symbols --out $(BUILD)/gen $(NVML_OBJ)
	@touch $@
$(BUILD)/gen/vc_nvml_unsup_gen.c $(BUILD)/gen/libnvidia-ml.map: $(NVML_GEN_STAMP)
	@:
$(LIBNVML): $(NVML_OBJ) $(BUILD)/obj/gen/vc_nvml_unsup_gen.o $(call obj,$(CLIENT_SRC) $(SHARED_SRC)) $(NVML_GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libnvidia-ml.so.1 -Wl,--version-script=$(BUILD)/gen/libnvidia-ml.map \
		-Wl,-z,defs -o $@ $(filter %.o,$^) $(LDLIBS)
	ln -sf libnvidia-ml.so.1 $(@D)/libnvidia-ml.so

# The guest NVML's suite: an NVML program (and a CUDA one, for the
# processes and memory it shows) over both guest libraries.
$(BUILD)/obj/tests/integration/test_nvml.o: CSTD := -std=c11 -D_GNU_SOURCE
$(BUILD)/obj/tests/integration/test_nvml.o: CFLAGS += $(CHECK_CFLAGS) -Iguest-lib/nvml
$(BUILD)/tests/test_nvml: $(BUILD)/obj/tests/integration/test_nvml.o $(LIBNVML) $(LIBCUDA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/guest -Wl,-rpath,'$$ORIGIN/../guest' -lnvidia-ml -lcuda -ljansson \
		$(CHECK_LIBS) $(LDLIBS)

# The listener's admin socket speaks JSON (Jansson); nothing else links it.
$(SERVER_BIN): $(call obj,$(PROGRAM_SRC)) $(LIBSTANDIN) $(LIBSERVER) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -ljansson -ldl

$(BUILD)/tests/test_exptab: $(BUILD)/obj/tests/unit/test_exptab.o $(LIBEXPTAB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/test_fatbin: $(BUILD)/obj/tests/unit/test_fatbin.o $(call obj,guest-lib/libcuda/fatbin.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/test_place: $(BUILD)/obj/tests/unit/test_place.o $(call obj,guest-lib/vc_place.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/test_crew: $(BUILD)/obj/tests/unit/test_crew.o $(call obj,guest-lib/vc_crew.c guest-lib/vc_thread.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

# Quotas, idle reclaim and the admin socket, through the guest library (docs/MGMT.md).
$(BUILD)/obj/tests/integration/test_quota.o: CSTD := -std=c11 -D_GNU_SOURCE
$(BUILD)/obj/tests/integration/test_quota.o: CFLAGS += $(CHECK_CFLAGS)
$(BUILD)/tests/test_quota: $(BUILD)/obj/tests/integration/test_quota.o $(LIBCUDA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/guest -Wl,-rpath,'$$ORIGIN/../guest' -lcuda -ljansson $(CHECK_LIBS) $(LDLIBS)

# A GPU-bound client for the compute-weight test (ci/gpushare-test.sh).
$(BUILD)/obj/tests/integration/gpushare_load.o: CSTD := -std=c11 -D_GNU_SOURCE
$(BUILD)/tests/gpushare_load: $(BUILD)/obj/tests/integration/gpushare_load.o $(LIBCUDA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/guest -Wl,-rpath,'$$ORIGIN/../guest' -lcuda $(LDLIBS)

# QEMU's side of the VM link, played by a Check test (docs/VM.md).
$(BUILD)/obj/tests/integration/test_vm_link.o: CFLAGS += $(CHECK_CFLAGS)
$(BUILD)/tests/test_vm_link: $(BUILD)/obj/tests/integration/test_vm_link.o $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(LIBSTANDIN) $(LIBSERVER) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS) -ldl

# A CUDA application: built against cuda.h as applications are (no internal
# API names), linked to the guest libcuda.so.1.
CUDA_SUITES := test_cuda_api test_cuda_objects test_arrays test_managed test_graphs test_hostile_api
CUDA_SUITES += test_pinned
$(patsubst %,$(BUILD)/obj/tests/integration/%.o,$(CUDA_SUITES)): CSTD := -std=c11 -D_GNU_SOURCE
$(patsubst %,$(BUILD)/obj/tests/integration/%.o,$(CUDA_SUITES)): CFLAGS += $(CHECK_CFLAGS)
$(BUILD)/obj/tests/integration/test_managed.o: CFLAGS += -Itests/lib
$(BUILD)/obj/tests/integration/test_hostile_api.o: CFLAGS += -Itests/lib
$(BUILD)/tests/test_hostile_api: $(BUILD)/obj/tests/lib/vt_admin.o
# descriptors between test processes as the server passes them (SCM_RIGHTS)
$(BUILD)/tests/test_cuda_objects: $(call obj,shared/vc_sock.c)
$(patsubst %,$(BUILD)/tests/%,$(CUDA_SUITES)): $(BUILD)/tests/%: $(BUILD)/obj/tests/integration/%.o $(LIBCUDA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -L$(BUILD)/guest -Wl,-rpath,'$$ORIGIN/../guest' -lcuda $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/integration/%.o $(LIBCLIENT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# What runs inside the test VM (tests/vm, ci/vm-test.sh).
$(BUILD)/vm/%: $(BUILD)/obj/tests/vm/%.o $(LIBCLIENT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Hostile and VM-side clients below the guest library: CUDA operations
# encoded by hand on the transport client (tests/lib/vt_cuda.c).
VT_CUDA_USERS := $(BUILD)/tests/bad_client $(BUILD)/vm/vm_guest_test
$(BUILD)/obj/tests/integration/bad_client.o $(BUILD)/obj/tests/vm/vm_guest_test.o \
$(BUILD)/obj/tests/unit/test_decode.o $(BUILD)/obj/tests/unit/test_threads.o: CFLAGS += -Itests/lib
$(BUILD)/tests/bad_client: $(BUILD)/obj/tests/integration/bad_client.o
$(BUILD)/vm/vm_guest_test: $(BUILD)/obj/tests/vm/vm_guest_test.o
$(VT_CUDA_USERS): $(BUILD)/obj/tests/lib/vt_cuda.o $(BUILD)/obj/tests/lib/vt_hostile.o $(BUILD)/obj/tests/lib/vt_hostile_live.o \
	$(BUILD)/obj/tests/lib/vt_admin.o $(LIBCLIENT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LDLIBS)

# The stress test, the demo and the transport benchmark are CUDA programs over
# the guest library's driver API, the path users take (built against cuda.h
# as applications are); the benchmark also opens a session of its own to read
# how the transport cuts bulk copies.
DRIVER_APP_OBJ := $(BUILD)/obj/tests/integration/stress_client.o $(BUILD)/obj/tests/integration/demo.o \
                  $(BUILD)/obj/bench/ring_bench.o
$(DRIVER_APP_OBJ): CSTD := -std=c11 -D_GNU_SOURCE
$(DRIVER_APP_OBJ): CFLAGS += -Itests/lib
DRIVER_APP_LINK = -L$(BUILD)/guest -Wl,-rpath,'$$ORIGIN/../guest' -lcuda

$(BUILD)/tests/stress_client: $(BUILD)/obj/tests/integration/stress_client.o $(LIBSHARED) $(LIBCUDA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(DRIVER_APP_LINK) $(LDLIBS)

$(BUILD)/demo/vcuda-demo: $(BUILD)/obj/tests/integration/demo.o $(LIBSHARED) $(LIBCUDA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(DRIVER_APP_LINK) $(LDLIBS)

$(BUILD)/bench/ring_bench: $(BUILD)/obj/bench/ring_bench.o $(BUILD)/obj/bench/pipe_ceiling.o $(LIBCLIENT) $(LIBSHARED) \
                           $(LIBCUDA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(DRIVER_APP_LINK) $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIBCLIENT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(LIBSTANDIN) $(LIBSERVER) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS) -ldl

# NVIDIA's CUDA runtime over the guest library: an nvcc-built program, with
# static (nvcc's default) and shared cudart.
NVCC := $(CUDA_HOME)/bin/nvcc
CUDART_SMOKE := $(BUILD)/tests/cudart_smoke_static $(BUILD)/tests/cudart_smoke_shared $(BUILD)/tests/libs_smoke \
                $(BUILD)/tests/nvrtc_cache
cudart-smoke: $(CUDART_SMOKE)
$(BUILD)/tests/cudart_smoke_static: tests/integration/cudart/cudart_smoke.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 -o $@ $<
$(BUILD)/tests/cudart_smoke_shared: tests/integration/cudart/cudart_smoke.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 -cudart shared -Xlinker -rpath=$(CUDA_HOME)/lib64 -o $@ $<
# cuBLAS, cuFFT and cuRAND (shared, as applications use them) over the guest library.
$(BUILD)/tests/libs_smoke: tests/integration/cudart/libs_smoke.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 -cudart shared -Xlinker -rpath=$(CUDA_HOME)/lib64 -o $@ $< -lcublas -lcufft -lcurand
# NVRTC (its compile cache, export table da9151d3) over the guest library.
$(BUILD)/tests/nvrtc_cache: tests/integration/cudart/nvrtc_cache.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -isystem $(CUDA_HOME)/include -DCUDA_INC='"$(CUDA_HOME)/include"' \
		-o $@ $< -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnvrtc

# ---- variants ------------------------------------------------------------------
asan:
	$(MAKE) VARIANT=asan
tsan:
	$(MAKE) VARIANT=tsan
fuzz:
	$(MAKE) VARIANT=fuzz

# ---- the documented entry points -----------------------------------------------
setup:
	bash ci/setup.sh

check: setup
	bash ci/check.sh

demo: setup
	$(MAKE) VARIANT=release
	bash ci/demo.sh

bench: $(ALL)
	bash ci/bench.sh

$(BUILD)/bench/cuda_bench: bench/cuda/cuda_bench.cu bench/cuda/bench_common.h
	@mkdir -p $(@D)
	$(NVCC) -O2 -o $@ $<

$(BUILD)/bench/seed_bench: bench/cuda/seed_bench.cu bench/cuda/bench_common.h
	@mkdir -p $(@D)
	$(NVCC) -O2 -o $@ $< -lcublas -lcufft

# The GPU machine's measuring tools, built here (CI builds them so that none
# rots between the sessions that run them): make bench's two CUDA programs and
# the driver-API splits that docs/PERFORMANCE.md quotes.
BENCH_TOOLS := $(BUILD)/bench/cuda_bench $(BUILD)/bench/seed_bench $(BUILD)/bench/register_split \
               $(BUILD)/bench/sync_split $(BUILD)/bench/launch_split $(BUILD)/bench/copy_split
bench-tools: $(BENCH_TOOLS)

# The driver-API splits (docs/PERFORMANCE.md), each linked against
# libcuda.so.1 and run natively or through vcuda: register_split (where
# registering a gigabyte goes), sync_split (what a launch and a
# synchronisation are made of), launch_split (what a launch costs the driver
# in each form a server could use), copy_split (what a blocking copy from each
# kind of page-locked memory costs).
$(BUILD)/bench/%_split: bench/cuda/%_split.c bench/cuda/ckd.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -isystem $(CUDA_HOME)/include -o $@ $< \
		-L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread

test-gpu:
	bash ci/test-gpu.sh

# Real frameworks (PyTorch, Triton, JAX, CuPy, cuDNN) natively and through
# vcuda in the same run, compared (tests/workloads/run.py); GPU machine only.
test-workloads: $(SERVER_BIN) $(LIBCUDA)
	$${WL_PYTHON:-/opt/torch/.venv/bin/python3} tests/workloads/run.py --vcuda-build $(BUILD)

# QEMU 10.0.2 with the virtio-vcuda-pci series (qemu-patches/), dynamic and
# static, cached under $(VCUDA_CACHE) (default /var/cache/vcuda) by their inputs.
qemu: setup
	bash ci/qemu.sh
	bash ci/qemu.sh --static

# Boot a TCG guest with the device and run the VM tests inside it (docs/VM.md).
vm-test: setup
	bash ci/vm-test.sh

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# ---- host manager: vcuda-mgmtd, vcudactl (mgmt/, docs/MGMT.md) --------------------
MGMT_SRC  := mgmt/util.c mgmt/model.c mgmt/lines.c mgmt/proto.c mgmt/place.c mgmt/db.c mgmt/gpus.c mgmt/nvml.c \
             mgmt/auth.c mgmt/servers.c mgmt/vmsock.c mgmt/ops.c
MGMT_SRC  += mgmt/metrics.c
# The metrics endpoint's HTTP side (libmicrohttpd) is vcuda-mgmtd's alone.
MHD_LIBS  := $(shell pkg-config --libs libmicrohttpd 2>/dev/null || echo -lmicrohttpd)
MGMT_LIBS := $(shell pkg-config --libs sqlite3 jansson 2>/dev/null || echo -lsqlite3 -ljansson)
LIBMGMT   := $(BUILD)/lib/libvcmgmt.a
MGMTD_BIN := $(BUILD)/bin/vcuda-mgmtd
VCACTL_BIN := $(BUILD)/bin/vcudactl
MGMT_TESTS := $(BUILD)/tests/test_mgmt_place $(BUILD)/tests/test_mgmt_proto $(BUILD)/tests/test_mgmt_db
MGMT_INTEG := $(BUILD)/tests/mgmt_qemu $(BUILD)/tests/libfake_nvml.so

ifeq ($(VARIANT),fuzz)
MGMT_ALL := $(BUILD)/fuzz/fuzz_mgmt_request
else ifeq ($(VARIANT),tsan)
MGMT_ALL :=
else
MGMT_ALL := $(MGMTD_BIN) $(VCACTL_BIN) $(MGMT_TESTS) $(MGMT_INTEG)
endif
all build: $(MGMT_ALL)
.PHONY: mgmt
mgmt: $(MGMT_ALL)

$(BUILD)/obj/mgmt/%.o: CFLAGS += -Imgmt
$(BUILD)/obj/tests/mgmt/%.o: CFLAGS += -Imgmt $(CHECK_CFLAGS)
$(BUILD)/obj/tests/fuzz/fuzz_mgmt_request.o: CFLAGS += -Imgmt

$(LIBMGMT): $(call obj,$(MGMT_SRC))

$(MGMTD_BIN): $(call obj,mgmt/mgmtd_main.c mgmt/metrics_http.c) $(LIBMGMT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(MGMT_LIBS) $(MHD_LIBS) $(LDLIBS) -ldl

$(VCACTL_BIN): $(call obj,mgmt/vcactl_main.c mgmt/ctl_print.c) $(LIBMGMT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(MGMT_LIBS) $(LDLIBS)

$(BUILD)/tests/test_mgmt_%: $(BUILD)/obj/tests/mgmt/test_mgmt_%.o $(LIBMGMT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(MGMT_LIBS) $(LDLIBS) -ldl

# QEMU's side of a VM socket, for ci/mgmt-test.sh.
$(BUILD)/tests/mgmt_qemu: $(BUILD)/obj/tests/mgmt/mgmt_qemu.o $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fuzz/fuzz_mgmt_request: $(BUILD)/obj/tests/fuzz/fuzz_mgmt_request.o $(LIBMGMT) $(LIBSHARED)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(MGMT_LIBS) $(LDLIBS) -ldl

# A stand-in libnvidia-ml.so.1 (vcuda-mgmtd --nvml-lib), for ci/mgmt-test.sh.
$(BUILD)/tests/libfake_nvml.so: tests/mgmt/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(OPT) -fPIC -shared -fvisibility=hidden -o $@ $<
