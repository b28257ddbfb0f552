"""The CUDA driver API as vcuda remotes it: one entry per function.

Prototypes and types come from the toolkit's cuda.h (preprocessed, so each
entry names the exact exported symbol, e.g. cuMemAlloc_v2). An entry says only
what the header cannot:

  fn(symbol, mode, **annotations)
    mode      SYNC (waits for the host's reply) or ASYNC (fire and forget; a
              failure becomes the sticky error, as CUDA reports asynchronous
              errors at the next synchronising call).
    syncs     the call synchronises with the device: report a pending
              asynchronous error, as CUDA does.
    buf       {param: length_param}: a char* output of length_param bytes.
    destroys  the handle parameter this call destroys (dropped from the host's
              table on success).
    ctx_free  the call does not need a current context (device queries).
    nullable  pointer parameters that may be NULL.
    local     hand-written in the guest library, which answers it itself or
              maps it onto a vcuda operation (vcMemcpy for every copy, ...).
    manual    remoted, but both sides are hand-written (launch, copies,
              modules): the generator only reserves an opcode.
    after     a guest function to call after the call succeeded (cache upkeep).
    owner     who owns the handle the call returns: "ctx" (the current
              context) or the name of a handle parameter (cuModuleGetFunction's
              hmod). The host forgets the handle with its owner, so that a
              function of an unloaded module or a stream of a destroyed
              context is an invalid handle, never a dangling driver pointer.
    virtual   not a driver function: an operation of vcuda's own (device
              facts in one call, image upload, parameter layout); manual.

Pointer parameters default to outputs (T *) or strings (const char *).
Handles (CUcontext, CUstream, ...) travel as 64-bit ids that the host looks up
in the session's own tables; device pointers travel as they are (the host's
real GPU addresses).
"""

SYNC, ASYNC = "sync", "async"

FUNCS = []


def fn(symbol, mode, **kw):
    FUNCS.append(dict(symbol=symbol, mode=mode, **kw))


# ---- vcuda's own operations (hand-written; see shared/vc_cuda_manual.h) ----------
fn("vcDriverInfo", SYNC, virtual=True)
fn("vcDeviceInfo", SYNC, virtual=True)
fn("vcImageBegin", SYNC, virtual=True)
fn("vcImagePut", ASYNC, virtual=True)
fn("vcFuncParams", SYNC, virtual=True)
fn("vcExportSlot", SYNC, virtual=True)
fn("vcLoad", SYNC, virtual=True)        # every module/library load
fn("vcLaunch", ASYNC, virtual=True)     # every kernel launch form
fn("vcMemAlloc", SYNC, virtual=True)    # plain, pitched and stream-ordered
fn("vcMemFree", SYNC, virtual=True)
fn("vcMemcpy", SYNC, virtual=True)      # every copy; async ones are sent without a reply
fn("vcMemset", SYNC, virtual=True)
fn("vcHostFunc", ASYNC, virtual=True)   # cuLaunchHostFunc, cuStreamAddCallback
fn("vcMemcpy2D", SYNC, virtual=True)    # 2D device-to-device copies
fn("vcSync", SYNC, virtual=True)        # stream, event and context synchronisation
fn("vcOccupancyClusters", SYNC, virtual=True)  # cuOccupancyMaxActiveClusters
fn("vcPinnedBase", SYNC, virtual=True)  # where the guest mapped the pinned pool
fn("vcHostRegister", SYNC, virtual=True)
fn("vcHostUnregister", SYNC, virtual=True)
fn("vcConsole", SYNC, virtual=True)     # device printf output the host captured

# ---- driver and devices -------------------------------------------------------
fn("cuInit", SYNC, local=True)
fn("cuDriverGetVersion", SYNC, local=True)
fn("cuGetProcAddress", SYNC, local=True)
fn("cuGetProcAddress_v2", SYNC, local=True)
fn("cuGetExportTable", SYNC, local=True)
fn("cuGetErrorName", SYNC, local=True)
fn("cuGetErrorString", SYNC, local=True)
fn("cuDeviceGet", SYNC, ctx_free=True)
fn("cuDeviceGetCount", SYNC, local=True)
fn("cuDeviceGetName", SYNC, ctx_free=True, buf={"name": "len"})
fn("cuDeviceGetUuid", SYNC, local=True)
fn("cuDeviceGetUuid_v2", SYNC, local=True)
fn("cuDeviceTotalMem_v2", SYNC, local=True)
fn("cuDeviceGetAttribute", SYNC, local=True)
fn("cuDeviceGetPCIBusId", SYNC, ctx_free=True, buf={"pciBusId": "len"})
fn("cuDeviceGetByPCIBusId", SYNC, ctx_free=True)
fn("cuDeviceCanAccessPeer", SYNC, ctx_free=True)
fn("cuDeviceGetP2PAttribute", SYNC, ctx_free=True)
fn("cuDeviceGetDefaultMemPool", SYNC, ctx_free=True)
fn("cuDeviceGetMemPool", SYNC, ctx_free=True)
fn("cuDeviceGetTexture1DLinearMaxWidth", SYNC, ctx_free=True)
fn("cuDeviceGetExecAffinitySupport", SYNC, ctx_free=True)

# ---- primary contexts and contexts --------------------------------------------
# Each session gets contexts of its own (a fault in one client's context must
# not touch another's), so the guest's primary context is emulated by the host.
fn("cuDevicePrimaryCtxRetain", SYNC, manual=True)
fn("cuDevicePrimaryCtxRelease_v2", SYNC, manual=True)
fn("cuDevicePrimaryCtxReset_v2", SYNC, manual=True)
fn("cuDevicePrimaryCtxGetState", SYNC, manual=True)
fn("cuDevicePrimaryCtxSetFlags_v2", SYNC, manual=True)
fn("cuCtxCreate_v4", SYNC, manual=True)
fn("cuCtxDestroy_v2", SYNC, manual=True)
fn("cuCtxGetCurrent", SYNC, local=True)
fn("cuCtxSetCurrent", SYNC, local=True)
fn("cuCtxPushCurrent_v2", SYNC, local=True)
fn("cuCtxPopCurrent_v2", SYNC, local=True)
fn("cuCtxGetDevice", SYNC)
fn("cuCtxGetDevice_v2", SYNC)
fn("cuCtxSynchronize_v2", SYNC, local=True)
fn("cuCtxGetFlags", SYNC)
fn("cuCtxSetFlags", SYNC)
fn("cuCtxGetId", SYNC)
fn("cuCtxGetApiVersion", SYNC, nullable=["ctx"])
fn("cuCtxSynchronize", SYNC, local=True)
fn("cuCtxGetLimit", SYNC)
fn("cuCtxSetLimit", SYNC)
fn("cuCtxGetCacheConfig", SYNC)
fn("cuCtxSetCacheConfig", SYNC)
fn("cuCtxGetStreamPriorityRange", SYNC, nullable=["leastPriority", "greatestPriority"])
fn("cuCtxResetPersistingL2Cache", SYNC)

# ---- modules, libraries, kernels, functions ----------------------------------
fn("cuModuleLoadData", SYNC, local=True)
fn("cuModuleLoadDataEx", SYNC, local=True)
fn("cuModuleLoadFatBinary", SYNC, local=True)
fn("cuModuleUnload", SYNC, destroys="hmod", after="vc_cu_params_forget")
fn("cuModuleGetFunction", SYNC, owner="hmod")
fn("cuModuleGetGlobal_v2", SYNC, nullable=["dptr", "bytes"])
fn("cuModuleGetLoadingMode", SYNC, ctx_free=True)
fn("cuModuleGetFunctionCount", SYNC)
fn("cuModuleEnumerateFunctions", SYNC, manual=True)  # paged, like kernel lists
fn("cuLibraryLoadData", SYNC, local=True)
fn("cuLibraryUnload", SYNC, destroys="library", after="vc_cu_params_forget")
fn("cuLibraryGetKernel", SYNC, owner="library")
fn("cuLibraryGetKernelCount", SYNC)
fn("cuLibraryGetModule", SYNC, owner="library")
fn("cuLibraryGetGlobal", SYNC, nullable=["dptr", "bytes"])
fn("cuLibraryGetManaged", SYNC, nullable=["dptr", "bytes"])
fn("cuLibraryEnumerateKernels", SYNC, manual=True)  # paged: any number of kernels
fn("cuKernelGetName", SYNC, manual=True)            # the guest keeps the strings
fn("cuFuncGetName", SYNC, manual=True)
fn("cuKernelGetFunction", SYNC, owner="kernel")
fn("cuKernelGetAttribute", SYNC)
fn("cuKernelSetAttribute", SYNC, after="vc_cu_params_forget")
fn("cuKernelSetCacheConfig", SYNC)
fn("cuKernelGetParamInfo", SYNC, nullable=["paramOffset", "paramSize"])
fn("cuFuncGetAttribute", SYNC)
fn("cuFuncSetAttribute", SYNC, after="vc_cu_params_forget")
fn("cuFuncSetCacheConfig", SYNC)
fn("cuFuncGetParamInfo", SYNC, nullable=["paramOffset", "paramSize"])
fn("cuFuncGetModule", SYNC)
fn("cuFuncLoad", SYNC)
fn("cuFuncIsLoaded", SYNC)

# ---- launches -------------------------------------------------------------------
fn("cuLaunchKernel", ASYNC, local=True)
fn("cuLaunchKernelEx", ASYNC, local=True)
fn("cuLaunchCooperativeKernel", ASYNC, local=True)
fn("cuLaunchHostFunc", ASYNC, local=True)
fn("cuStreamAddCallback", ASYNC, local=True)
fn("cuOccupancyMaxActiveBlocksPerMultiprocessor", SYNC)
fn("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", SYNC)
fn("cuOccupancyAvailableDynamicSMemPerBlock", SYNC)
fn("cuOccupancyMaxActiveClusters", SYNC, local=True)

# ---- memory ---------------------------------------------------------------------
fn("cuMemAlloc_v2", SYNC, local=True)
fn("cuMemFree_v2", SYNC, local=True)
fn("cuMemAllocPitch_v2", SYNC, local=True)
fn("cuMemGetInfo_v2", SYNC)
fn("cuMemGetAddressRange_v2", SYNC, nullable=["pbase", "psize"])
fn("cuMemAllocAsync", SYNC, local=True)
fn("cuMemFreeAsync", ASYNC, local=True)
fn("cuMemcpyHtoD_v2", SYNC, local=True)
fn("cuMemcpyDtoH_v2", SYNC, local=True)
fn("cuMemcpyDtoD_v2", SYNC, local=True)
fn("cuMemcpy", SYNC, local=True)
fn("cuMemcpyHtoDAsync_v2", ASYNC, local=True)
fn("cuMemcpyDtoHAsync_v2", ASYNC, local=True)
fn("cuMemcpyDtoDAsync_v2", ASYNC, local=True)
fn("cuMemcpyAsync", ASYNC, local=True)
fn("cuMemcpy2D_v2", SYNC, local=True)
fn("cuMemcpy2DUnaligned_v2", SYNC, local=True)
fn("cuMemcpy2DAsync_v2", ASYNC, local=True)
fn("cuMemsetD8_v2", SYNC, local=True)
fn("cuMemsetD16_v2", SYNC, local=True)
fn("cuMemsetD32_v2", SYNC, local=True)
fn("cuMemsetD8Async", ASYNC, local=True)
fn("cuMemsetD16Async", ASYNC, local=True)
fn("cuMemsetD32Async", ASYNC, local=True)
fn("cuMemsetD2D8_v2", SYNC, local=True)
fn("cuMemsetD2D16_v2", SYNC, local=True)
fn("cuMemsetD2D32_v2", SYNC, local=True)
fn("cuMemsetD2D8Async", ASYNC, local=True)
fn("cuMemsetD2D16Async", ASYNC, local=True)
fn("cuMemsetD2D32Async", ASYNC, local=True)

# ---- streams ---------------------------------------------------------------------
fn("cuStreamCreate", SYNC, owner="ctx")
fn("cuStreamCreateWithPriority", SYNC, owner="ctx")
fn("cuStreamDestroy_v2", SYNC, destroys="hStream")
fn("cuStreamSynchronize", SYNC, local=True)
fn("cuStreamQuery", SYNC)
fn("cuStreamWaitEvent", ASYNC)
fn("cuStreamGetFlags", SYNC)
fn("cuStreamGetPriority", SYNC)
fn("cuStreamGetId", SYNC)
fn("cuStreamGetCtx", SYNC)
fn("cuStreamGetDevice", SYNC)
fn("cuStreamIsCapturing", SYNC)
fn("cuStreamBeginCapture_v2", SYNC)
fn("cuStreamEndCapture", SYNC)
fn("cuStreamGetCaptureInfo_v3", SYNC, manual=True)
fn("cuStreamGetCaptureInfo_v2", SYNC, local=True)   # onto _v3 (no edge data)

# ---- events ----------------------------------------------------------------------
fn("cuEventCreate", SYNC, owner="ctx")
fn("cuEventDestroy_v2", SYNC, destroys="hEvent")
fn("cuEventRecord", ASYNC)
fn("cuEventRecordWithFlags", ASYNC)
fn("cuEventSynchronize", SYNC, local=True)
fn("cuEventQuery", SYNC)
fn("cuEventElapsedTime_v2", SYNC)

# ---- graphs ----------------------------------------------------------------------
# Built in the host driver; the guest names graphs and nodes by ids. Nodes
# whose parameters hold pointers or arrays are hand-written (cu_graph.c).
fn("cuGraphCreate", SYNC)
fn("cuGraphNodeGetType", SYNC)
fn("cuGraphGetNodes", SYNC, manual=True)
fn("cuGraphAddKernelNode_v2", SYNC, manual=True)
fn("cuGraphKernelNodeSetParams_v2", SYNC, manual=True)
fn("cuGraphExecKernelNodeSetParams_v2", SYNC, manual=True)
fn("cuGraphKernelNodeGetParams_v2", SYNC, manual=True)
fn("cuGraphAddMemcpyNode", SYNC, manual=True)
fn("cuGraphInstantiateWithFlags", SYNC)
fn("cuGraphLaunch", ASYNC)
fn("cuGraphUpload", ASYNC)
fn("cuGraphDestroy", SYNC, manual=True)  # forgets the graph's nodes too
fn("cuGraphExecDestroy", SYNC, destroys="hGraphExec")

# ---- memory pools ------------------------------------------------------------------
fn("cuMemPoolTrimTo", SYNC)
fn("cuMemPoolCreate", SYNC, manual=True)
fn("cuMemPoolDestroy", SYNC, destroys="pool")
fn("cuMemPoolSetAttribute", SYNC, manual=True)
fn("cuMemPoolGetAttribute", SYNC, manual=True)
fn("cuDeviceSetMemPool", SYNC, ctx_free=True)
fn("cuMemAllocFromPoolAsync", SYNC, local=True)


# ---- pointers and host memory (hand-written in the guest: the shared region) ------
fn("cuMemHostAlloc", SYNC, local=True)
fn("cuMemAllocHost_v2", SYNC, local=True)
fn("cuMemFreeHost", SYNC, local=True)
fn("cuMemHostRegister_v2", SYNC, local=True)
fn("cuMemHostUnregister", SYNC, local=True)
fn("cuMemHostGetDevicePointer_v2", SYNC, local=True)
fn("cuMemHostGetFlags", SYNC, local=True)
fn("cuPointerGetAttribute", SYNC, local=True)
fn("cuPointerGetAttributes", SYNC, local=True)


# ---- managed memory --------------------------------------------------------
# (one section per family; entries of this family go below this line)
#


# ---- virtual memory management and IPC -------------------------------------
# (one section per family; entries of this family go below this line)
#


# ---- arrays, textures, surfaces, array and 3D copies -----------------------
# (one section per family; entries of this family go below this line)
#


# ---- graphs: every node kind, update, clone, capture to graph --------------
# (one section per family; entries of this family go below this line)
#


# ---- streams, launches, contexts, limits, tensor maps, profiler ------------
# (one section per family; entries of this family go below this line)
#


# ---- JIT linking, module files, legacy names, refused families -------------
# (one section per family; entries of this family go below this line)
#


# ---- hostile-guest fixes ---------------------------------------------------
# (one section per family; entries of this family go below this line)
#
