//! The device population's learner backend: burn's fusion over [`DeviceLearner`]
//! ([`FusedLearner`]), and the two crossings between them.
//!
//! Fused, PPO's minibatch step is about 120 launches instead of 217 (lavapipe, counted
//! with cubecl's profiler, 2026-11-29 in the results log): burn joins the loss's, the
//! backward pass's and Adam's elementwise chains into one kernel each. Fusion defers ops
//! until something reads their results, so a tensor enters it only once its values are
//! final ([`fuse_float`], [`fuse_int`]: the unfused backend's ops are enqueued on the
//! device's stream at once, before anything that overwrites their inputs), and the
//! parameters leave it resolved ([`resolve_float`]: every fused op they wait on is
//! enqueued first).

use burn::tensor::{Int, Tensor, TensorMetadata, TensorPrimitive};
use burn_cubecl::fusion::FusionCubeRuntime;
use burn_cubecl::tensor::CubeTensor;
use burn_fusion::stream::OperationStreams;
use burn_fusion::{Fusion, FusionTensor, NoOp, get_client};
use burn_ir::{BackendIr, InitOperationIr, OperationIr};

use crate::device_collect::{CubeRuntime, DeviceLearner};

/// burn's fusion over the device learner of runtime `R`: what the device population
/// learns on.
pub type FusedLearner<R> = Fusion<DeviceLearner<R>>;

/// `tensor` of the unfused backend as the fused backend's: the same memory, no copy.
/// Whatever computes `tensor` was enqueued on the device's stream when it was made, so the
/// fused ops that read it run after.
pub fn fuse_float<R: CubeRuntime, const D: usize>(
    tensor: Tensor<DeviceLearner<R>, D>,
) -> Tensor<FusedLearner<R>, D> {
    let primitive = register::<R>(tensor.into_primitive().tensor());
    Tensor::from_primitive(TensorPrimitive::Float(primitive))
}

/// [`fuse_float`] for an integer tensor.
pub fn fuse_int<R: CubeRuntime, const D: usize>(
    tensor: Tensor<DeviceLearner<R>, D, Int>,
) -> Tensor<FusedLearner<R>, D, Int> {
    Tensor::from_primitive(register::<R>(tensor.into_primitive()))
}

/// The unfused backend's tensor holding `tensor`'s values: every fused op it depends on is
/// enqueued on the device's stream first (nothing waits for the device).
pub fn resolve_float<R: CubeRuntime, const D: usize>(
    tensor: Tensor<FusedLearner<R>, D>,
) -> CubeTensor<R> {
    let fused = tensor.into_primitive().tensor();
    let client = fused.client.clone();
    client.resolve_tensor_float::<DeviceLearner<R>>(fused)
}

/// [`resolve_float`] for an integer tensor.
pub fn resolve_int<R: CubeRuntime, const D: usize>(
    tensor: Tensor<FusedLearner<R>, D, Int>,
) -> CubeTensor<R> {
    let fused = tensor.into_primitive();
    let client = fused.client.clone();
    client.resolve_tensor_int::<DeviceLearner<R>>(fused)
}

/// Registers `tensor`'s handle with the fusion client of its device, as burn's own
/// `from_data` does with a tensor it has just uploaded.
fn register<R: CubeRuntime>(tensor: CubeTensor<R>) -> FusionTensor<FusionCubeRuntime<R>> {
    let client = get_client::<DeviceLearner<R>>(&tensor.device);
    let (shape, dtype) = (tensor.shape(), tensor.dtype());
    // `CubeBackend`'s handle of a tensor is the tensor, whatever its type.
    let handle = DeviceLearner::<R>::float_tensor_handle(tensor);
    let init = InitOperationIr::create(shape, dtype, || client.register_tensor_handle(handle));
    let mut outputs = client.register(
        OperationStreams::default(),
        OperationIr::Init(init),
        NoOp::<DeviceLearner<R>>::new(),
    );
    outputs.remove(0)
}
