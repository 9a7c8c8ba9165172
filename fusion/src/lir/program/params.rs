//! Where a lowered program reads each of the graph's params: [`ParamLayout`].

use crate::graph::{DType, Graph, NodeId};

/// Index of every param in its type's params buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamLayout {
    /// `f32` params in buffer order.
    pub f32_params: Vec<NodeId>,
    /// `u32` params in buffer order.
    pub u32_params: Vec<NodeId>,
}

impl ParamLayout {
    /// The layout of `graph`'s params.
    pub fn of(graph: &Graph) -> Self {
        let (f32_params, u32_params) = (graph.params().into_iter().map(|(id, _)| id))
            .partition(|id| graph.node(*id).dtype == DType::F32);
        Self {
            f32_params,
            u32_params,
        }
    }

    /// Whether `id` is an `f32` param, and its index in its buffer.
    pub(in crate::lir) fn index(&self, id: NodeId) -> (bool, u32) {
        let find = |params: &[NodeId]| params.iter().position(|p| *p == id);
        match find(&self.f32_params) {
            Some(i) => (true, i as u32),
            None => (false, find(&self.u32_params).expect("a param") as u32),
        }
    }
}
