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
        let mut layout = Self::default();
        for (id, _) in graph.params() {
            match graph.node(id).dtype {
                DType::F32 => layout.f32_params.push(id),
                _ => layout.u32_params.push(id),
            }
        }
        layout
    }

    /// Whether `id` is an `f32` param, and its index in its buffer.
    pub(in crate::lir) fn index(&self, id: NodeId) -> (bool, u32) {
        match self.f32_params.iter().position(|p| *p == id) {
            Some(i) => (true, i as u32),
            None => (
                false,
                self.u32_params
                    .iter()
                    .position(|p| *p == id)
                    .expect("a param") as u32,
            ),
        }
    }
}
