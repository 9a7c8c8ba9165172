//! The values of an elementwise graph: element types, node ids, shapes and constants.

use std::fmt;

/// Element type of a value, named (`Display`) `f32`, `u32` or `bool`. Booleans are stored
/// as `u32` 0/1 in device buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::Display)]
#[strum(serialize_all = "lowercase")]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 32-bit unsigned integer.
    U32,
    /// Boolean (a `u32` 0 or 1 in memory).
    Bool,
}

impl DType {
    /// Bytes one element occupies in a device buffer.
    pub fn size_bytes(self) -> u64 {
        4
    }
}

/// Index of a node in its graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// Shape of a value: `n` elements, or `n` rows of `k` packed elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// One element per lane: `[n]`.
    Lanes,
    /// `k` elements per lane, row-major: `[n, k]`.
    Packed(u32),
}

impl Shape {
    /// Elements per lane: 1, or `k` when packed.
    pub fn width(self) -> usize {
        match self {
            Shape::Lanes => 1,
            Shape::Packed(k) => k as usize,
        }
    }
}

/// A compile-time constant. Floats are kept as bits so constants hash and compare exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Constant {
    /// An `f32` given by its bits.
    F32(u32),
    /// A `u32`.
    U32(u32),
    /// A boolean.
    Bool(bool),
}

impl Constant {
    /// An `f32` constant.
    pub fn f32(value: f32) -> Self {
        Constant::F32(value.to_bits())
    }

    /// The constant as a 32-bit word (booleans as 0/1), as buffers hold it.
    pub fn bits(self) -> u32 {
        match self {
            Constant::F32(bits) | Constant::U32(bits) => bits,
            Constant::Bool(value) => u32::from(value),
        }
    }

    /// The constant's type.
    pub fn dtype(self) -> DType {
        match self {
            Constant::F32(_) => DType::F32,
            Constant::U32(_) => DType::U32,
            Constant::Bool(_) => DType::Bool,
        }
    }
}

impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::F32(bits) => write!(f, "{:?}", f32::from_bits(*bits)),
            Constant::U32(value) => write!(f, "{value}u"),
            Constant::Bool(value) => write!(f, "{value}"),
        }
    }
}
