//! [`Params`]: a graph's runtime params and their current values, one set per bank.
//!
//! The table is what the host knows. Backends read it as they launch (the CPU runtime pins
//! the values into its kernels; CubeCL uploads them into two buffers, `f32` and `u32`,
//! bank-major, each param at its place in [`crate::lir::program::ParamLayout`]: node order
//! within its type). [`Params::f32_table`] is the `f32` buffer's layout, so a buffer made
//! elsewhere (a learner's weights on the device) can take the table's place
//! ([`crate::exec::Executor::set_f32_params_buffer`]).

use std::collections::HashMap;

use crate::graph::{DType, Graph, NodeId};

/// The params of a graph, in node order, with their current values as bits, one set of
/// values per bank. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Params {
    /// Param nodes, in node order.
    pub nodes: Vec<NodeId>,
    /// Each param's type.
    pub dtypes: Vec<DType>,
    /// Each bank's value of each param (an `f32`'s bits or a `u32`), bank-major
    /// (`[bank * nodes.len() + param]`); zero until set.
    pub bits: Vec<u32>,
    pub(super) by_name: HashMap<String, usize>,
    banks: usize,
}

impl Params {
    pub(super) fn of(graph: &Graph, banks: usize) -> Self {
        let params = graph.params();
        Self {
            nodes: params.iter().map(|(id, _)| *id).collect(),
            dtypes: params.iter().map(|(id, _)| graph.node(*id).dtype).collect(),
            bits: vec![0; banks * params.len()],
            by_name: (params.iter().enumerate())
                .map(|(i, (_, name))| ((*name).to_owned(), i))
                .collect(),
            banks,
        }
    }

    /// The index of the param on `node`, if it is one (`nodes` is in node order).
    pub fn index_of(&self, node: NodeId) -> Option<usize> {
        self.nodes.binary_search(&node).ok()
    }

    /// Bank `bank`'s values, in node order.
    pub fn bank(&self, bank: usize) -> &[u32] {
        let count = self.nodes.len();
        &self.bits[bank * count..(bank + 1) * count]
    }

    /// The indices in [`Self::nodes`] of the `f32` params (`f32`), or of the others (the
    /// `u32` buffer's), in the order of their buffer.
    fn indices_in(&self, f32: bool) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(move |&i| (self.dtypes[i] == DType::F32) == f32)
    }

    /// The `f32` params' indices in [`Self::nodes`], in the order of the `f32` buffer.
    fn f32_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.indices_in(true)
    }

    /// Every bank's bits of the `f32` params (`f32`) or of the others, bank-major.
    fn table_bits(&self, f32: bool) -> Vec<u32> {
        let indices: Vec<usize> = self.indices_in(f32).collect();
        (0..self.banks)
            .flat_map(|bank| indices.iter().map(move |&i| self.bank(bank)[i]))
            .collect()
    }

    /// `f32` params a bank has: the width of a bank's row of [`Self::f32_table`].
    pub fn f32_count(&self) -> usize {
        self.f32_indices().count()
    }

    /// The place of `f32` param `name` in a bank's row of [`Self::f32_table`] (`None` if
    /// the graph has no `f32` param of that name).
    pub fn f32_slot(&self, name: &str) -> Option<usize> {
        let index = *self.by_name.get(name)?;
        (self.dtypes[index] == DType::F32)
            .then(|| self.f32_indices().take_while(|&i| i < index).count())
    }

    /// Every bank's `f32` params, bank-major (`[banks, f32_count]`): the `f32` params
    /// buffer's layout.
    pub fn f32_table(&self) -> Vec<f32> {
        (self.table_bits(true).into_iter())
            .map(f32::from_bits)
            .collect()
    }

    /// Every bank's `u32` params (every param that is not `f32`: draw keys), bank-major:
    /// the `u32` params buffer's layout.
    pub fn u32_table(&self) -> Vec<u32> {
        self.table_bits(false)
    }

    /// Sets every bank's `f32` params from `values`, laid out as [`Self::f32_table`]
    /// (`values.len()` is `banks * f32_count`, which the caller checked).
    pub fn set_f32_table(&mut self, values: &[f32]) {
        let (count, indices): (usize, Vec<usize>) =
            (self.nodes.len(), self.f32_indices().collect());
        for (bank, row) in values.chunks(indices.len().max(1)).enumerate() {
            for (&i, value) in indices.iter().zip(row) {
                self.bits[bank * count + i] = value.to_bits();
            }
        }
    }
}

/// Which of the two params buffers (`f32`, `u32`) changed since the last run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParamsChanged {
    /// The `f32` params (a policy's weights, an env's constants).
    pub f32: bool,
    /// The `u32` params (draw keys).
    pub u32: bool,
}

impl ParamsChanged {
    /// Both (a new executor, new launches).
    pub const BOTH: Self = Self {
        f32: true,
        u32: true,
    };

    /// Whether either changed.
    pub fn any(self) -> bool {
        self.f32 || self.u32
    }

    /// Marks the buffer of type `dtype` changed.
    pub fn mark(&mut self, dtype: DType) {
        match dtype {
            DType::F32 => self.f32 = true,
            _ => self.u32 = true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GraphBuilder;

    /// A graph with params `a` (f32), `k` (u32), `b` (f32), in that node order.
    fn three_params() -> Graph {
        let g = GraphBuilder::new();
        let x = g.input("x", DType::F32);
        let c = g.input("c", DType::U32);
        let a = g.param("a", DType::F32);
        let k = g.param("k", DType::U32);
        let b = g.param("b", DType::F32);
        g.output("y", x * a + b);
        g.output("z", c + k);
        g.build().unwrap()
    }

    #[test]
    fn each_table_holds_its_type_alone_and_keeps_banks_apart() {
        let mut params = Params::of(&three_params(), 2);
        assert_eq!(params.f32_count(), 2);
        assert_eq!(params.f32_slot("a"), Some(0));
        assert_eq!(params.f32_slot("b"), Some(1));
        assert_eq!(params.f32_slot("k"), None);
        assert_eq!(params.f32_slot("missing"), None);
        params.set_f32_table(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(params.f32_table(), [1.0, 2.0, 3.0, 4.0]);
        // Bank 1's `b` is its third param (after `a` and `k`); `k` stays zero.
        assert_eq!(params.bank(1), [3f32.to_bits(), 0, 4f32.to_bits()]);
        assert_eq!(params.bank(0)[1], 0);
        // The `u32` table holds `k` alone, a bank after another.
        params.bits[1] = 7;
        params.bits[4] = 9;
        assert_eq!(params.u32_table(), [7, 9]);
    }
}
