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
    wrap      generated, but the guest stub is named vc_gen_<symbol>: a
              hand-written function of the guest exports the symbol and
              calls it (to keep guest-side state: captures, ...).
    post      (guest function, [parameters]): called with those parameters
              after the call succeeded; its CUresult is the call's (a
              managed global mapped into the guest).
    host_post (host function, [arguments]): generated host decoders call it
              with the session after the driver succeeded; an output
              parameter is passed by address (it may change it: cuMemGetInfo's
              view of the quota), an input parameter by its wire value (a
              handle by its id), any other word as written (a constant); its
              CUresult is the call's.
    host_pre  (host function, [arguments]): the same, called after the
              handles were looked up and before the driver is: a nonzero
              CUresult refuses the call (user objects' reference counts).
    owner     who owns the handle the call returns: "ctx" (the current
              context) or the name of a handle parameter (cuModuleGetFunction's
              hmod). The host forgets the handle with its owner, so that a
              function of an unloaded module or a stream of a destroyed
              context is an invalid handle, never a dangling driver pointer.
    virtual   not a driver function: an operation of vcuda's own (device
              facts in one call, image upload, parameter layout); manual.
    refused   why a guest cannot have this call; with err, the CUresult it
              answers (the driver's own code for the case). Without local,
              the generator emits a stub that answers err and names the
              reason once under VCUDA_DEBUG (a prototype is not needed, and
              its _ptsz/_ptds variants are refused alike). With local, the
              guest answers it by a hand-written rule (stated in a comment),
              e.g. "no such object can exist, so every handle is invalid".
              tools/gen/gen_coverage.py fails the build past 25 refusals.

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
fn("cuCtxGetDevice", SYNC, wrap=True)   # fastpath.c: answers cached
fn("cuCtxGetDevice_v2", SYNC, wrap=True)   # fastpath.c: answers cached
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
fn("cuModuleGetGlobal_v2", SYNC, nullable=["dptr", "bytes"], post=("vc_cu_managed_global", ["dptr", "bytes"]))
fn("cuModuleGetLoadingMode", SYNC, ctx_free=True)
fn("cuModuleGetFunctionCount", SYNC)
fn("cuModuleEnumerateFunctions", SYNC, manual=True)  # paged, like kernel lists
fn("cuLibraryLoadData", SYNC, local=True)
fn("cuLibraryUnload", SYNC, destroys="library", after="vc_cu_params_forget")
fn("cuLibraryGetKernel", SYNC, owner="library")
fn("cuLibraryGetKernelCount", SYNC)
fn("cuLibraryGetModule", SYNC, owner="library")
fn("cuLibraryGetGlobal", SYNC, nullable=["dptr", "bytes"], post=("vc_cu_managed_global", ["dptr", "bytes"]))
fn("cuLibraryGetManaged", SYNC, nullable=["dptr", "bytes"], post=("vc_cu_managed_global", ["dptr", "bytes"]))
fn("cuLibraryEnumerateKernels", SYNC, manual=True)  # paged: any number of kernels
fn("cuKernelGetName", SYNC, manual=True)            # the guest keeps the strings
fn("cuFuncGetName", SYNC, manual=True)
fn("cuKernelGetFunction", SYNC, owner="kernel", wrap=True)   # fastpath.c: answers cached
fn("cuKernelGetAttribute", SYNC, wrap=True)   # fastpath.c: answers cached
fn("cuKernelSetAttribute", SYNC, wrap=True)   # fastpath.c: a repeat answered here, attr_set() after
fn("cuKernelSetCacheConfig", SYNC)
fn("cuKernelGetParamInfo", SYNC, nullable=["paramOffset", "paramSize"])
fn("cuFuncGetAttribute", SYNC, wrap=True)   # fastpath.c: answers cached
fn("cuFuncSetAttribute", SYNC, wrap=True)   # fastpath.c: a repeat answered here, attr_set() after
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
fn("cuStreamQuery", SYNC, wrap=True)   # fastpath.c: idle streams answered in the guest
fn("cuStreamWaitEvent", ASYNC)
fn("cuStreamGetFlags", SYNC)
fn("cuStreamGetPriority", SYNC)
fn("cuStreamGetId", SYNC)
fn("cuStreamGetCtx", SYNC)
fn("cuStreamGetDevice", SYNC)
fn("cuStreamIsCapturing", SYNC, wrap=True)   # fastpath.c: no capture active
fn("cuStreamBeginCapture_v2", SYNC, wrap=True)   # capture.c: capture modes
fn("cuStreamEndCapture", SYNC, wrap=True)
fn("cuThreadExchangeStreamCaptureMode", SYNC, local=True)
fn("cuStreamGetCaptureInfo_v3", SYNC, manual=True)
fn("cuStreamGetCaptureInfo_v2", SYNC, local=True)   # onto _v3 (no edge data)

# ---- events ----------------------------------------------------------------------
fn("cuEventCreate", SYNC, owner="ctx")
fn("cuEventDestroy_v2", SYNC, destroys="hEvent")
fn("cuEventRecord", ASYNC)
fn("cuEventRecordWithFlags", ASYNC)
fn("cuEventSynchronize", SYNC, local=True)
fn("cuEventQuery", SYNC, wrap=True)   # fastpath.c: idle events answered in the guest
fn("cuEventElapsedTime_v2", SYNC)

# ---- graphs ----------------------------------------------------------------------
# Built in the host driver; the guest names graphs and nodes by ids. Nodes
# whose parameters hold pointers or arrays are hand-written (cu_graph.c).
fn("cuGraphCreate", SYNC)
fn("cuGraphNodeGetType", SYNC)
fn("cuGraphGetNodes", SYNC, manual=True)
fn("cuGraphAddKernelNode_v2", SYNC, manual=True)
fn("cuGraphKernelNodeSetParams_v2", SYNC, manual=True)
fn("cuGraphExecKernelNodeSetParams_v2", ASYNC, manual=True)  # sent without a reply (graph.c)
fn("cuGraphKernelNodeGetParams_v2", SYNC, manual=True)
fn("cuGraphAddMemcpyNode", SYNC, manual=True)
fn("cuGraphInstantiateWithFlags", SYNC, local=True)  # onto cuGraphInstantiateWithParams
fn("cuGraphLaunch", ASYNC)
fn("cuGraphUpload", ASYNC)
fn("cuGraphDestroy", SYNC, manual=True)  # forgets the graph's nodes too
fn("cuGraphExecDestroy", SYNC, manual=True)  # refunds graph memory (graph_exec.c)

# ---- memory pools ------------------------------------------------------------------
fn("cuMemPoolTrimTo", SYNC)
fn("cuMemPoolCreate", SYNC, manual=True)
fn("cuMemPoolDestroy", SYNC, destroys="pool", host_post=("vc_cu_ipc_pool_gone", ["pool"]))
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
# The host driver's managed memory at the same address in the guest, kept
# coherent by protection faults (guest-lib/libcuda/managed*.c; docs).
fn("vcManagedAlloc", SYNC, virtual=True)    # cuMemAllocManaged, charged like cuMemAlloc
fn("vcManagedFree", SYNC, virtual=True)     # cuMemFree of a managed allocation
fn("vcManagedQuery", SYNC, virtual=True)    # is a module global managed (__managed__)?
fn("vcMemRangeAttrs", SYNC, virtual=True)   # cuMemRangeGetAttribute(s)
fn("vcMemBatch", SYNC, virtual=True)        # batched prefetches and discards
fn("cuMemAllocManaged", SYNC, local=True)
fn("cuMemPrefetchAsync", SYNC)     # errors at once, as natively
fn("cuMemPrefetchAsync_v2", SYNC)
fn("cuMemAdvise", SYNC)
fn("cuMemAdvise_v2", SYNC)
fn("cuMemRangeGetAttribute", SYNC, local=True)
fn("cuMemRangeGetAttributes", SYNC, local=True)
fn("cuStreamAttachMemAsync", SYNC)
fn("cuMemPrefetchBatchAsync", SYNC, local=True)
fn("cuMemDiscardBatchAsync", SYNC, local=True)
fn("cuMemDiscardAndPrefetchBatchAsync", SYNC, local=True)


# ---- virtual memory management and IPC -------------------------------------
# (one section per family; entries of this family go below this line)
#
# Allocation handles travel as ids of the session's own table (never the
# driver's value); IPC handles as tokens of the server (resources/ipc.h).
# Both sides hand-written: guest-lib/libcuda/vmm.c, ipc.c; host-backend/cuda/
# vmm.c, ipc.c (shared/vc_cuda_vmm.h has the wire).
fn("cuMemAddressReserve", SYNC, manual=True)
fn("cuMemAddressFree", SYNC, manual=True)
fn("cuMemCreate", SYNC, manual=True)
fn("cuMemRelease", SYNC, manual=True)
fn("cuMemMap", SYNC, manual=True)
fn("cuMemUnmap", SYNC, manual=True)
fn("cuMemSetAccess", SYNC, manual=True)
fn("cuMemGetAccess", SYNC)
fn("cuMemGetAllocationGranularity", SYNC, manual=True)   # cached in the guest
fn("cuMemRetainAllocationHandle", SYNC, manual=True)
fn("cuMemGetAllocationPropertiesFromHandle", SYNC, manual=True)
fn("cuMemExportToShareableHandle", SYNC, manual=True)    # FABRIC; POSIX fd through the listener
fn("cuMemImportFromShareableHandle", SYNC, manual=True)
fn("cuMemGetHandleForAddressRange", SYNC, local=True)    # refused: a host dma-buf fd
fn("cuMemPoolExportToShareableHandle", SYNC, manual=True)
fn("cuMemPoolImportFromShareableHandle", SYNC, manual=True)
fn("cuMemPoolExportPointer", SYNC, manual=True)
fn("cuMemPoolImportPointer", SYNC, manual=True)
fn("cuMemPoolSetAccess", SYNC, manual=True)
fn("cuMemPoolGetAccess", SYNC, manual=True)
fn("cuIpcGetMemHandle", SYNC, manual=True)
fn("cuIpcOpenMemHandle_v2", SYNC, manual=True)
fn("cuIpcCloseMemHandle", SYNC, manual=True)
fn("cuIpcGetEventHandle", SYNC, manual=True)
fn("cuIpcOpenEventHandle", SYNC, manual=True)


# ---- arrays, textures, surfaces, array and 3D copies -----------------------
# (one section per family; entries of this family go below this line)
#
# Arrays and mipmapped arrays are handles of the session's tables, owned by
# their context; creating one is charged to the quota (array.c), and the
# arrays a plane or a mipmap level names go with their parent. Texture and
# surface objects are the driver's values (kernels take them), accepted back
# only when the session made them. Every copy with an array on a side, and
# every 3D copy, is one vcMemcpy3D per piece (copy3d.c).
fn("vcMemcpy3D", SYNC, virtual=True)     # copies with arrays, 3D copies; async ones unanswered
fn("cuArrayCreate_v2", SYNC, manual=True)
fn("cuArray3DCreate_v2", SYNC, manual=True)
fn("cuArrayDestroy", SYNC, manual=True)
fn("cuArrayGetDescriptor_v2", SYNC)
fn("cuArray3DGetDescriptor_v2", SYNC)
fn("cuArrayGetPlane", SYNC, manual=True)
fn("cuArrayGetMemoryRequirements", SYNC)
fn("cuArrayGetSparseProperties", SYNC, manual=True)
fn("cuMipmappedArrayCreate", SYNC, manual=True)
fn("cuMipmappedArrayDestroy", SYNC, manual=True)
fn("cuMipmappedArrayGetLevel", SYNC, manual=True)
fn("cuMipmappedArrayGetMemoryRequirements", SYNC)
fn("cuMipmappedArrayGetSparseProperties", SYNC, manual=True)
fn("cuTexObjectCreate", SYNC, manual=True)
fn("cuTexObjectDestroy", SYNC, manual=True)
fn("cuTexObjectGetResourceDesc", SYNC, manual=True)
fn("cuTexObjectGetTextureDesc", SYNC, manual=True)
fn("cuTexObjectGetResourceViewDesc", SYNC, manual=True)
fn("cuSurfObjectCreate", SYNC, manual=True)
fn("cuSurfObjectDestroy", SYNC, manual=True)
fn("cuSurfObjectGetResourceDesc", SYNC, manual=True)
fn("cuMemcpy3D_v2", SYNC, local=True)
fn("cuMemcpy3DAsync_v2", ASYNC, local=True)
fn("cuMemcpy3DPeer", SYNC, local=True)
fn("cuMemcpy3DPeerAsync", ASYNC, local=True)
fn("cuMemcpyHtoA_v2", SYNC, local=True)
fn("cuMemcpyAtoH_v2", SYNC, local=True)
fn("cuMemcpyHtoAAsync_v2", ASYNC, local=True)
fn("cuMemcpyAtoHAsync_v2", ASYNC, local=True)
fn("cuMemcpyAtoD_v2", SYNC, local=True)
fn("cuMemcpyDtoA_v2", SYNC, local=True)
fn("cuMemcpyAtoA_v2", SYNC, local=True)
fn("cuMemcpyPeer", SYNC, local=True)
fn("cuMemcpyPeerAsync", ASYNC, local=True)
fn("cuMemcpyBatchAsync", ASYNC, local=True)
fn("cuMemcpyBatchAsync_v2", ASYNC, local=True)
fn("cuMemcpy3DBatchAsync", ASYNC, local=True)
fn("cuMemcpy3DBatchAsync_v2", ASYNC, local=True)


# ---- graphs: every node kind, update, clone, capture to graph --------------
# (one section per family; entries of this family go below this line)
#
# Nodes of every kind but kernels travel as one flat description (vcGraphNode,
# shared/vc_cuda_graph.h); the guest maps each kind's calls and CUgraphNodeParams
# onto it. Calls that hand back node or graph ids are hand-written so that the
# ids belong to their graph (they go when it goes).
fn("vcGraphNode", SYNC, virtual=True)   # add, set, exec set, get: every kind but kernels
fn("vcGraphEdges", SYNC, virtual=True)  # edges, root nodes, dependencies, dependents (paged)
fn("vcGraphDeps", SYNC, virtual=True)   # cuGraphAdd/RemoveDependencies(_v2)
fn("cuGraphAddEmptyNode", SYNC, local=True)
fn("cuGraphAddMemsetNode", SYNC, local=True)
fn("cuGraphAddHostNode", SYNC, local=True)
fn("cuGraphAddEventRecordNode", SYNC, local=True)
fn("cuGraphAddEventWaitNode", SYNC, local=True)
fn("cuGraphAddChildGraphNode", SYNC, local=True)
fn("cuGraphAddMemAllocNode", SYNC, local=True)
fn("cuGraphAddMemFreeNode", SYNC, local=True)
fn("cuGraphAddBatchMemOpNode", SYNC, local=True)
fn("cuGraphAddNode", SYNC, local=True)
fn("cuGraphAddNode_v2", SYNC, local=True)
fn("cuGraphNodeSetParams", SYNC, local=True)
fn("cuGraphExecNodeSetParams", SYNC, local=True)
fn("cuGraphMemsetNodeGetParams", SYNC, local=True)
fn("cuGraphMemsetNodeSetParams", SYNC, local=True)
fn("cuGraphExecMemsetNodeSetParams", SYNC, local=True)
fn("cuGraphMemcpyNodeGetParams", SYNC, local=True)
fn("cuGraphMemcpyNodeSetParams", SYNC, local=True)
fn("cuGraphExecMemcpyNodeSetParams", SYNC, local=True)
fn("cuGraphHostNodeGetParams", SYNC, local=True)
fn("cuGraphHostNodeSetParams", SYNC, local=True)
fn("cuGraphExecHostNodeSetParams", SYNC, local=True)
fn("cuGraphExecChildGraphNodeSetParams", SYNC, local=True)
fn("cuGraphMemAllocNodeGetParams", SYNC, local=True)
fn("cuGraphMemFreeNodeGetParams", SYNC, local=True)
fn("cuGraphBatchMemOpNodeGetParams", SYNC, local=True)
fn("cuGraphBatchMemOpNodeSetParams", SYNC, local=True)
fn("cuGraphExecBatchMemOpNodeSetParams", SYNC, local=True)
# a guest holds no external semaphore (they are refused in a VM): invalid handle
fn("cuGraphAddExternalSemaphoresSignalNode", SYNC, local=True)
fn("cuGraphAddExternalSemaphoresWaitNode", SYNC, local=True)
fn("cuGraphExternalSemaphoresSignalNodeGetParams", SYNC, local=True)
fn("cuGraphExternalSemaphoresSignalNodeSetParams", SYNC, local=True)
fn("cuGraphExternalSemaphoresWaitNodeGetParams", SYNC, local=True)
fn("cuGraphExternalSemaphoresWaitNodeSetParams", SYNC, local=True)
fn("cuGraphExecExternalSemaphoresSignalNodeSetParams", SYNC, local=True)
fn("cuGraphExecExternalSemaphoresWaitNodeSetParams", SYNC, local=True)
# kernel nodes under their CUDA 11 names (CUDA_KERNEL_NODE_PARAMS_v1)
fn("cuGraphAddKernelNode", SYNC, local=True)
fn("cuGraphKernelNodeGetParams", SYNC, local=True)
fn("cuGraphKernelNodeSetParams", SYNC, local=True)
fn("cuGraphExecKernelNodeSetParams", SYNC, local=True)
fn("cuGraphKernelNodeGetAttribute", SYNC, manual=True)
fn("cuGraphKernelNodeSetAttribute", SYNC, manual=True)
fn("cuGraphKernelNodeCopyAttributes", SYNC)
fn("cuGraphEventRecordNodeGetEvent", SYNC)
fn("cuGraphEventRecordNodeSetEvent", SYNC)
fn("cuGraphEventWaitNodeGetEvent", SYNC)
fn("cuGraphEventWaitNodeSetEvent", SYNC)
fn("cuGraphExecEventRecordNodeSetEvent", SYNC)
fn("cuGraphExecEventWaitNodeSetEvent", SYNC)
fn("cuGraphChildGraphNodeGetGraph", SYNC, manual=True)
fn("cuGraphConditionalHandleCreate", SYNC, manual=True)
# topology
fn("cuGraphGetEdges", SYNC, local=True)
fn("cuGraphGetEdges_v2", SYNC, local=True)
fn("cuGraphGetRootNodes", SYNC, local=True)
fn("cuGraphNodeGetDependencies", SYNC, local=True)
fn("cuGraphNodeGetDependencies_v2", SYNC, local=True)
fn("cuGraphNodeGetDependentNodes", SYNC, local=True)
fn("cuGraphNodeGetDependentNodes_v2", SYNC, local=True)
fn("cuGraphAddDependencies", SYNC, local=True)
fn("cuGraphAddDependencies_v2", SYNC, local=True)
fn("cuGraphRemoveDependencies", SYNC, local=True)
fn("cuGraphRemoveDependencies_v2", SYNC, local=True)
fn("cuGraphDestroyNode", SYNC, manual=True)     # forgets what the node owned
fn("cuGraphClone", SYNC)
fn("cuGraphNodeFindInClone", SYNC, manual=True)
# executable graphs
fn("cuGraphInstantiate_v2", SYNC, local=True)
fn("cuGraphInstantiateWithParams", SYNC, manual=True)  # charges graph memory to the quota
fn("cuGraphExecGetFlags", SYNC)
fn("cuGraphExecUpdate", SYNC, local=True)
fn("cuGraphExecUpdate_v2", SYNC, manual=True)
fn("cuGraphNodeSetEnabled", SYNC, manual=True)  # a bounced copy's host node follows it
fn("cuGraphNodeGetEnabled", SYNC)
fn("cuGraphDebugDotPrint", SYNC, manual=True)   # the text comes back in pieces; the guest writes the file
# graph memory
fn("cuDeviceGetGraphMemAttribute", SYNC, manual=True)
fn("cuDeviceSetGraphMemAttribute", SYNC, manual=True)
fn("cuDeviceGraphMemTrim", SYNC, ctx_free=True)
# user objects: the destructor runs in the guest, through the host-callback queue
fn("cuUserObjectCreate", SYNC, manual=True)
# The host counts the references the guest holds on each user object, so that
# a release past them is refused (natively it frees the object under a graph
# that still uses it) and the session's end drops what is left; and forgets
# an object's id once the driver destroyed it (graph_state.c).
fn("cuUserObjectRetain", SYNC, host_pre=("vc_cu_uobj_check", ["object", "count", "VC_CU_UOBJ_ADD"]),
   host_post=("vc_cu_uobj_note", ["object", "count", "VC_CU_UOBJ_ADD"]))
fn("cuUserObjectRelease", SYNC, host_pre=("vc_cu_uobj_check", ["object", "count", "VC_CU_UOBJ_DROP"]),
   host_post=("vc_cu_uobj_note", ["object", "count", "VC_CU_UOBJ_DROP"]))
fn("cuGraphRetainUserObject", SYNC, host_pre=("vc_cu_uobj_check", ["object", "count", "flags"]),
   host_post=("vc_cu_uobj_note", ["object", "count", "flags"]))
fn("cuGraphReleaseUserObject", SYNC, host_pre=("vc_cu_uobj_check", ["object", "count", "0"]))
# capture
fn("cuStreamBeginCaptureToGraph", SYNC, manual=True)
fn("cuStreamUpdateCaptureDependencies", SYNC, local=True)
fn("cuStreamUpdateCaptureDependencies_v2", SYNC, manual=True)


# ---- streams, launches, contexts, limits, tensor maps, profiler ------------
# (one section per family; entries of this family go below this line)
#
# Streams: attributes (an access policy window's base is checked as the
# session's memory), the context a stream belongs to, memory operations
# (write/wait values, batches: every address checked as device memory of the
# session), and GPUDirect RDMA flushes.
fn("cuStreamGetAttribute", SYNC, manual=True)
fn("cuStreamSetAttribute", SYNC, manual=True)
fn("cuStreamCopyAttributes", SYNC)
fn("cuStreamGetCtx_v2", SYNC, nullable=["pCtx", "pGreenCtx"])
fn("cuStreamGetGreenCtx", SYNC)
fn("cuStreamWriteValue32_v2", SYNC, local=True)
fn("cuStreamWriteValue64_v2", SYNC, local=True)
fn("cuStreamWaitValue32_v2", SYNC, local=True)
fn("cuStreamWaitValue64_v2", SYNC, local=True)
fn("cuStreamBatchMemOp_v2", SYNC, local=True)
fn("vcStreamMemOp", SYNC, virtual=True)  # every write/wait value and batch form
fn("cuFlushGPUDirectRDMAWrites", SYNC)
# Launches: occupancy computed in the guest around the driver's block count
# (the dynamic shared memory callback is the guest's), cluster occupancy,
# the deprecated execution control (cuFuncSetBlockShape, cuParamSet*,
# cuLaunch, cuLaunchGrid) kept in the guest and launched as cuLaunchKernel.
fn("cuOccupancyMaxPotentialBlockSize", SYNC, local=True)
fn("cuOccupancyMaxPotentialBlockSizeWithFlags", SYNC, local=True)
fn("cuOccupancyMaxPotentialClusterSize", SYNC, manual=True)
fn("cuLaunchCooperativeKernelMultiDevice", ASYNC, local=True)
fn("cuFuncSetBlockShape", SYNC, local=True)
fn("cuFuncSetSharedSize", SYNC, local=True)
fn("cuParamSetSize", SYNC, local=True)
fn("cuParamSeti", SYNC, local=True)
fn("cuParamSetf", SYNC, local=True)
fn("cuParamSetv", SYNC, local=True)
fn("cuParamSetTexRef", SYNC)   # texture references section: remoted
fn("cuLaunch", ASYNC, local=True)
fn("cuLaunchGrid", ASYNC, local=True)
fn("cuLaunchGridAsync", ASYNC, local=True)
fn("cuFuncSetSharedMemConfig", SYNC)
fn("cuCtxGetSharedMemConfig", SYNC)
fn("cuCtxSetSharedMemConfig", SYNC)
fn("cuKernelGetLibrary", SYNC)
# Tensor maps: encoded by the host driver, the global range checked first.
fn("cuTensorMapEncodeTiled", SYNC, local=True)
fn("cuTensorMapEncodeIm2col", SYNC, local=True)
fn("cuTensorMapEncodeIm2colWide", SYNC, local=True)
fn("cuTensorMapReplaceAddress", SYNC, local=True)
fn("vcTensorMap", SYNC, virtual=True)   # every encoding and address replacement
# Contexts and devices.
fn("cuCtxCreate_v2", SYNC, local=True)
fn("cuCtxCreate_v3", SYNC, manual=True)  # execution affinity; cuCtxCreate_v4 with parameters too
fn("cuCtxAttach", SYNC, local=True)
fn("cuCtxDetach", SYNC, local=True)
fn("cuCtxRecordEvent", SYNC)
fn("cuCtxWaitEvent", SYNC)
fn("cuCtxGetExecAffinity", SYNC, manual=True)
fn("cuCtxEnablePeerAccess", SYNC)
fn("cuCtxDisablePeerAccess", SYNC)
fn("cuDeviceGetProperties", SYNC, ctx_free=True)
fn("cuDeviceComputeCapability", SYNC, ctx_free=True)
fn("cuDeviceGetLuid", SYNC, local=True)
fn("cuDeviceGetHostAtomicCapabilities", SYNC, manual=True)
fn("cuDeviceGetP2PAtomicCapabilities", SYNC, manual=True)
# Profiler (cudaProfiler.h).
fn("cuProfilerInitialize", SYNC, local=True)
fn("cuProfilerStart", SYNC)
fn("cuProfilerStop", SYNC)


# ---- JIT linking, module files, legacy names, refused families -------------
# (one section per family; entries of this family go below this line)
#
# JIT linking, loads with JIT options, loads from files (link.c on both
# sides): the guest reads files and translates option arrays; the host links
# with its own log buffers and sends their text and the outputs back.
fn("vcLinkCreate", SYNC, virtual=True)
fn("vcLinkAdd", SYNC, virtual=True)       # an input staged through vcImageBegin/vcImagePut
fn("vcLinkComplete", SYNC, virtual=True)
fn("vcLinkRead", SYNC, virtual=True)      # the linked image, a reply's data at a time
fn("vcLinkDestroy", SYNC, virtual=True)
fn("vcLoadJit", SYNC, virtual=True)       # cuModuleLoadDataEx, cuLibraryLoadData with options
fn("cuLinkCreate_v2", SYNC, local=True)
fn("cuLinkAddData_v2", SYNC, local=True)
fn("cuLinkAddFile_v2", SYNC, local=True)  # the file is read in the guest
fn("cuLinkComplete", SYNC, local=True)    # the guest keeps the image until cuLinkDestroy
fn("cuLinkDestroy", SYNC, local=True)
fn("cuModuleLoad", SYNC, local=True)      # read in the guest, then cuModuleLoadData
fn("cuLibraryLoadFromFile", SYNC, local=True)
# devctx.c checks the arguments first, then refuses:
fn("cuLibraryGetUnifiedFunction", SYNC, local=True,
   refused="a unified function's address is host code of the server's process", err="CUDA_ERROR_NOT_SUPPORTED")

# Legacy names (guest-lib/libcuda/legacy.c): first versions whose prototype
# differs from their successor's (32-bit CUdeviceptr_v1 and unsigned int
# sizes, CUDA_MEMCPY2D_v1, no capture mode), mapped onto the current call with
# the old ABI's 32-bit range rules. Same-prototype twins are generated aliases.
for _s in ("cuDeviceTotalMem", "cuCtxCreate", "cuMemGetInfo", "cuMemAlloc",
           "cuMemAllocPitch", "cuMemFree", "cuMemGetAddressRange", "cuMemAllocHost",
           "cuMemHostGetDevicePointer", "cuModuleGetGlobal", "cuMemcpyHtoD", "cuMemcpyDtoH",
           "cuMemcpyDtoD", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyDtoDAsync",
           "cuMemcpy2D", "cuMemcpy2DUnaligned", "cuMemcpy2DAsync", "cuMemsetD8", "cuMemsetD16",
           "cuMemsetD32", "cuMemsetD2D8", "cuMemsetD2D16", "cuMemsetD2D32", "cuStreamBeginCapture",
           "cuStreamGetCaptureInfo"):
    fn(_s, SYNC, local=True)

# Refused families (guest-lib/libcuda/refused.c says more).
# Graphics interop: a resource is registered from an OpenGL, EGL or VDPAU
# object, and no such context of the guest can reach the host's GPU. Rule
# (local): no registered resource can exist, so every resource is a handle
# that is not one: CUDA_ERROR_INVALID_HANDLE (a NULL output or array the call
# needs: CUDA_ERROR_INVALID_VALUE; before cuInit: CUDA_ERROR_NOT_INITIALIZED).
GFX = "no OpenGL, EGL or VDPAU context of a guest can reach the host's GPU, so no resource is ever registered"
fn("cuGraphicsUnregisterResource", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuGraphicsSubResourceGetMappedArray", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuGraphicsResourceGetMappedMipmappedArray", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuGraphicsResourceGetMappedPointer_v2", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuGraphicsResourceGetMappedPointer", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuGraphicsResourceSetMapFlags_v2", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuGraphicsMapResources", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuGraphicsUnmapResources", SYNC, local=True, refused=GFX, err="CUDA_ERROR_INVALID_HANDLE")
# External memory and semaphores: importing would hand the host driver a
# file descriptor, Win32 or NvSci handle of the guest's, which means nothing
# on the host: refused. Rule (local) for the rest: nothing imported can
# exist, so every handle is invalid (CUDA_ERROR_INVALID_HANDLE; NULL
# outputs or descriptors: CUDA_ERROR_INVALID_VALUE; signalling or waiting
# for no semaphore at all: CUDA_SUCCESS).
EXT = "external memory and semaphores are the guest's file descriptors or OS handles, which the host driver cannot open"
fn("cuImportExternalMemory", SYNC, refused=EXT, err="CUDA_ERROR_NOT_SUPPORTED")
fn("cuImportExternalSemaphore", SYNC, refused=EXT, err="CUDA_ERROR_NOT_SUPPORTED")
fn("cuDestroyExternalMemory", SYNC, local=True, refused=EXT, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuDestroyExternalSemaphore", SYNC, local=True, refused=EXT, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuExternalMemoryGetMappedBuffer", SYNC, local=True, refused=EXT, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuExternalMemoryGetMappedMipmappedArray", SYNC, local=True, refused=EXT, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuSignalExternalSemaphoresAsync", SYNC, local=True, refused=EXT, err="CUDA_ERROR_INVALID_HANDLE")
fn("cuWaitExternalSemaphoresAsync", SYNC, local=True, refused=EXT, err="CUDA_ERROR_INVALID_HANDLE")
# Multicast objects bind memory of several GPUs through NVSwitch; they are
# never forwarded to the host driver. The driver answers
# CUDA_ERROR_NOT_SUPPORTED on a device without
# CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, and the guest answers that
# attribute 0 (refused.c), though two H200s behind NVSwitch have it: NCCL
# (NVLS), PyTorch's symmetric memory and vLLM ask it before they make a
# multicast object, and take their other path.
MC = "multicast objects span GPUs through NVSwitch and are never forwarded to the host driver"
for _s in ("cuMulticastCreate", "cuMulticastAddDevice", "cuMulticastBindMem", "cuMulticastBindAddr",
           "cuMulticastUnbind", "cuMulticastGetGranularity"):
    fn(_s, SYNC, refused=MC, err="CUDA_ERROR_NOT_SUPPORTED")
# Process checkpoints name a process id; from inside a guest that is a
# guest process the host driver does not know, and checkpointing the
# session's worker would checkpoint the server, not the guest.
CKPT = "a process checkpoint from inside a guest would name a guest pid the host driver does not know"
for _s in ("cuCheckpointProcessCheckpoint", "cuCheckpointProcessGetRestoreThreadId",
           "cuCheckpointProcessGetState", "cuCheckpointProcessLock", "cuCheckpointProcessRestore",
           "cuCheckpointProcessUnlock"):
    fn(_s, SYNC, refused=CKPT, err="CUDA_ERROR_NOT_SUPPORTED")


# ---- hostile-guest fixes ---------------------------------------------------
# (one section per family; entries of this family go below this line)
#


# ---- v1 names, per-thread memops, array mapping, decompression, pools by location
# (one section per family; entries of this family go below this line)
#
# First-version array and copy names (CUDA_ARRAY_DESCRIPTOR_v1, CUDA_MEMCPY3D_v1,
# 32-bit offsets and sizes) map onto the _v2 calls in the guest with legacy.c's
# 32-bit rules (guest-lib/libcuda/legacy_array.c); the v1 memory operations'
# per-thread forms onto the _v2 calls on the calling thread's default stream.
for _s in ("cuArrayCreate", "cuArrayGetDescriptor", "cuArray3DCreate", "cuArray3DGetDescriptor",
           "cuMemcpy3D", "cuMemcpy3DAsync", "cuMemcpyAtoA", "cuMemcpyAtoD", "cuMemcpyAtoH",
           "cuMemcpyAtoHAsync", "cuMemcpyDtoA", "cuMemcpyHtoA", "cuMemcpyHtoAAsync",
           "cuStreamBatchMemOp_ptsz", "cuStreamWaitValue32_ptsz", "cuStreamWaitValue64_ptsz",
           "cuStreamWriteValue32_ptsz", "cuStreamWriteValue64_ptsz"):
    fn(_s, SYNC, local=True)
# Both sides hand-written (guest-lib/libcuda/memmisc.c, host-backend/cuda/
# memmisc.c; shared/vc_cuda_memmisc.h has the wire): sparse array mapping
# (array ids and allocation handle ids translated, every enum and range
# checked), batched decompression (every range the session's), the current
# and default pools of a location, and the one settable pointer attribute.
fn("cuMemMapArrayAsync", SYNC, manual=True)        # errors at once, as natively
fn("cuMemBatchDecompressAsync", SYNC, manual=True)
fn("cuMemGetDefaultMemPool", SYNC, manual=True)
fn("cuMemGetMemPool", SYNC, manual=True)
fn("cuMemSetMemPool", SYNC, manual=True)
fn("cuPointerSetAttribute", SYNC, manual=True)
# ---- texref: texture and surface references --------------------------------
# (one section per family; entries of this family go below this line)
#
# The legacy references (deprecated, still served by the CUDA 13 driver for
# PTX that declares .texref or .surfref). A module's references belong to it
# (they go when it is unloaded); cuTexRefCreate's belong to the current
# context. Arrays bound are ids of the session's tables; an address bound is
# checked as the session's memory first; arrays read back are ids the
# session already gave (host-backend/cuda/texref.c, guest-lib/libcuda/texref.c).
fn("cuModuleGetTexRef", SYNC, owner="hmod")
fn("cuModuleGetSurfRef", SYNC, owner="hmod")
fn("cuTexRefCreate", SYNC, owner="ctx")
fn("cuTexRefDestroy", SYNC, manual=True)          # only a reference the program created
fn("cuTexRefSetArray", SYNC)
fn("cuTexRefSetMipmappedArray", SYNC)
fn("cuTexRefSetAddress_v2", SYNC, manual=True)    # the range checked first
fn("cuTexRefSetAddress2D_v3", SYNC, manual=True)  # the 2D extent checked first
fn("cuTexRefSetFormat", SYNC)
fn("cuTexRefSetAddressMode", SYNC)
fn("cuTexRefSetFilterMode", SYNC)
fn("cuTexRefSetMipmapFilterMode", SYNC)
fn("cuTexRefSetMipmapLevelBias", SYNC)
fn("cuTexRefSetMipmapLevelClamp", SYNC)
fn("cuTexRefSetMaxAnisotropy", SYNC)
fn("cuTexRefSetBorderColor", SYNC, manual=True)   # four floats in
fn("cuTexRefSetFlags", SYNC)
fn("cuTexRefGetAddress_v2", SYNC)
fn("cuTexRefGetArray", SYNC, manual=True)         # an id the session gave, never a new one
fn("cuTexRefGetMipmappedArray", SYNC, manual=True)
fn("cuTexRefGetAddressMode", SYNC)
fn("cuTexRefGetFilterMode", SYNC)
fn("cuTexRefGetFormat", SYNC)
fn("cuTexRefGetMipmapFilterMode", SYNC)
fn("cuTexRefGetMipmapLevelBias", SYNC)
fn("cuTexRefGetMipmapLevelClamp", SYNC)
fn("cuTexRefGetMaxAnisotropy", SYNC)
fn("cuTexRefGetBorderColor", SYNC, manual=True)   # four floats out
fn("cuTexRefGetFlags", SYNC)
fn("cuSurfRefSetArray", SYNC)
fn("cuSurfRefGetArray", SYNC, manual=True)
# First versions (32-bit CUdeviceptr_v1, unsigned int sizes), mapped onto
# their successors with legacy.c's rules (texref.c).
fn("cuTexRefGetAddress", SYNC, local=True)
fn("cuTexRefSetAddress", SYNC, local=True)
fn("cuTexRefSetAddress2D", SYNC, local=True)
# ---- green contexts, driver logs, core dumps, async notifications, NvSci ----
# (one section per family; entries of this family go below this line)
#
# Green contexts and device resources are the host driver's (green.c on both
# sides; shared/vc_cuda_green.h has the wire). A green context and a resource
# descriptor are ids of the session's table; a green context owns its streams
# and the context cuCtxFromGreenCtx converts it into (made at creation, so
# that its id is one however it is reached). A CUdevResource's internal bytes
# never reach the guest: the host keeps each resource it hands out and puts
# the entry's id in their place.
fn("vcGreenSplitRead", SYNC, virtual=True)   # the rest of the last split's groups
fn("cuDeviceGetDevResource", SYNC, manual=True)
fn("cuCtxGetDevResource", SYNC, manual=True)
fn("cuGreenCtxGetDevResource", SYNC, manual=True)
fn("cuDevSmResourceSplitByCount", SYNC, manual=True)
fn("cuDevResourceGenerateDesc", SYNC, manual=True)
fn("cuGreenCtxCreate", SYNC, manual=True)
fn("cuGreenCtxDestroy", SYNC, manual=True)   # forgets its streams and its context
fn("cuCtxFromGreenCtx", SYNC, ctx_free=True, owner="hCtx",
   post=("vc_cu_green_ctx_post", ["pContext", "hCtx"]))
fn("cuGreenCtxGetId", SYNC)                  # NULL: the current green context's
fn("cuGreenCtxRecordEvent", SYNC, ctx_free=True)
fn("cuGreenCtxWaitEvent", SYNC, ctx_free=True)
fn("cuGreenCtxStreamCreate", SYNC, ctx_free=True, owner="greenCtx")
# The driver's error logs (logs.c on both sides): dumped into the host's
# memory and handed back in pieces; a file is written by the guest, whose
# path it is. Callbacks run in the guest, on the thread whose call failed,
# with the messages the host's own driver callback queued.
fn("vcLogs", SYNC, virtual=True)
fn("cuLogsCurrent", SYNC, ctx_free=True)
fn("cuLogsDumpToMemory", SYNC, local=True)
fn("cuLogsDumpToFile", SYNC, local=True)
fn("cuLogsRegisterCallback", SYNC, local=True)
fn("cuLogsUnregisterCallback", SYNC, local=True)
# Core dumps are written by the host's driver into the host's file system, at
# a path and with settings a guest must neither choose nor learn.
CORE = "a GPU core dump is written by the host's driver into the host's file system, which a guest must not name or trigger"
for _s in ("cuCoredumpGetAttribute", "cuCoredumpGetAttributeGlobal", "cuCoredumpSetAttribute",
           "cuCoredumpSetAttributeGlobal"):
    fn(_s, SYNC, refused=CORE, err="CUDA_ERROR_NOT_SUPPORTED")
fn("cuDeviceGetNvSciSyncAttributes", SYNC, refused="NvSci (Tegra and DRIVE OS) does not exist in a virtual machine",
   err="CUDA_ERROR_NOT_SUPPORTED")
ASYNCN = "the host driver's device events (async notifications) are not forwarded to guests"
fn("cuDeviceRegisterAsyncNotification", SYNC, refused=ASYNCN, err="CUDA_ERROR_NOT_SUPPORTED")
fn("cuDeviceUnregisterAsyncNotification", SYNC, refused=ASYNCN, err="CUDA_ERROR_NOT_SUPPORTED")
# ---- pinned memory beyond the pool (host-local memfd segments) ---------------
fn("vcPinnedSegment", SYNC, virtual=True)  # map or unmap a page-locked segment
# ---- guest NVML and quota views --------------------------------------------
# (guest-lib/nvml: the guest's libnvidia-ml.so.1; host-backend/cuda/nvml.c)
# cuMemGetInfo answers within the server's (the VM's) device-memory quota:
# total = the quota, free = min(the device's free, quota - what the
# server's sessions hold); the device's own figures without a quota.
next(f for f in FUNCS if f["symbol"] == "cuMemGetInfo_v2")["host_post"] = ("vc_cu_quota_meminfo", ["free", "total"])
# NVML queries the CUDA driver cannot answer (device facts come from
# vcDriverInfo/vcDeviceInfo): the memory view within the quota, the
# server's processes, and values the host's NVML reads (shared/vc_nvml_wire.h).
fn("vcNvmlSystem", SYNC, virtual=True)  # the host driver's version strings
fn("vcNvmlMemory", SYNC, virtual=True)  # total/free/used within the quota
fn("vcNvmlProcs", SYNC, virtual=True)   # the server's (VM's) processes and their memory
fn("vcNvmlValue", SYNC, virtual=True)   # one value of the host's NVML (utilisation, ...)
