//! Floats to bits and back inside a kernel, and constants that reach the device unchanged:
//! cubecl's backends print, merge and fold some float constants in ways IEEE arithmetic
//! does not (the last point of [`super`]'s list).
#![allow(missing_docs)] // `#[cube]` expands into undocumented items.

use cubecl::ir::{ConstantValue, ManagedVariable, Scope, Variable};
use cubecl::prelude::*;

/// The float whose bits are `bits` in every lane (infinities, NaN).
#[cube]
pub(super) fn splat_bits<N: Size>(#[comptime] bits: u32) -> Vector<f32, N> {
    from_bits::<N>(Vector::<u32, N>::new(bits))
}

/// The bits of each lane.
///
/// A constant's bits are computed on the host: cubecl's C++ backend writes a
/// reinterpretation as a `reinterpret_cast` to a reference, which a literal cannot bind.
#[allow(unused_variables)]
pub fn to_bits<N: Size>(x: Vector<f32, N>) -> Vector<u32, N> {
    cubecl::unexpanded!()
}

/// Expand method of [`to_bits()`].
pub mod to_bits {
    use super::*;

    pub fn expand<N: Size>(
        scope: &mut Scope,
        x: NativeExpand<Vector<f32, N>>,
    ) -> NativeExpand<Vector<u32, N>> {
        match x.expand.as_const() {
            Some(value) => {
                let bits = (value.as_f64() as f32).to_bits();
                constant(scope, ConstantValue::UInt(u64::from(bits)))
            }
            None => Vector::<u32, N>::__expand_reinterpret(scope, x),
        }
    }
}

/// Floats from the bits of each lane.
///
/// A constant becomes a float constant on the host when it is finite and not zero. The rest
/// go through [`opaque_from_bits()`]: cubecl prints float constants as decimals, which neither
/// WGSL nor C++ reads back for infinities and NaN, and its C++ backend cannot reinterpret a
/// literal (see [`to_bits()`]); and cubecl's optimiser treats a constant zero as any zero
/// (it merges `-0.0` with `0.0` and rewrites `x * 0` as `0` and `x + 0` as `x`, which IEEE
/// arithmetic does not for negative, infinite or NaN `x`, or `x = -0`).
#[allow(unused_variables)]
pub fn from_bits<N: Size>(x: Vector<u32, N>) -> Vector<f32, N> {
    cubecl::unexpanded!()
}

/// Expand method of [`from_bits()`].
pub mod from_bits {
    use super::*;

    pub fn expand<N: Size>(
        scope: &mut Scope,
        x: NativeExpand<Vector<u32, N>>,
    ) -> NativeExpand<Vector<f32, N>> {
        let float = x
            .expand
            .as_const()
            .map(|v| f32::from_bits(v.as_u64() as u32));
        match float {
            Some(float) if plain_constant(float) => {
                constant(scope, ConstantValue::Float(f64::from(float)))
            }
            Some(_) => opaque_from_bits::expand::<N>(scope, x),
            None => Vector::<f32, N>::__expand_reinterpret(scope, x),
        }
    }
}

/// `value` as a constant of `P`'s type (vector width included).
fn constant<P: CubePrimitive>(scope: &mut Scope, value: ConstantValue) -> NativeExpand<P> {
    let ty = P::as_type(scope);
    ManagedVariable::Plain(Variable::constant(value, ty)).into()
}

/// Whether cubecl carries `x` as a constant without changing it (see [`from_bits()`]).
fn plain_constant(x: f32) -> bool {
    x.is_finite() && x != 0.0
}

/// `bits` as floats, through a zero only the device's compiler sees is one (`UNIT_POS & 0`):
/// the reinterpretation's operand is then a value, not a literal, in every backend, and the
/// driver folds it back into the constant.
#[cube]
#[allow(clippy::erasing_op)] // The zero is the point: the kernel's compiler folds it, cubecl does not.
fn opaque_from_bits<N: Size>(bits: Vector<u32, N>) -> Vector<f32, N> {
    let zero = Vector::<u32, N>::new(UNIT_POS & 0u32);
    Vector::<f32, N>::reinterpret(bits | zero)
}
