//! Host values bound to a graph and the checks on them: [`HostArray`] (an input's or
//! output's elements), [`Scalar`] (a param's value) and [`BindError`] (why bindings do not
//! fit a graph), shared by the interpreter and every executor.

use std::collections::HashMap;

use super::{DType, Graph, Op};

/// A host array bound to a graph input or read from an output.
#[derive(Debug, Clone, PartialEq)]
pub enum HostArray {
    /// `f32` elements.
    F32(Vec<f32>),
    /// `u32` elements (also booleans as 0/1).
    U32(Vec<u32>),
}

impl HostArray {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            HostArray::F32(v) => v.len(),
            HostArray::U32(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A runtime scalar bound to a graph param.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// An `f32` value.
    F32(f32),
    /// A `u32` value.
    U32(u32),
}

/// Why a graph could not run with the given bindings.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BindError {
    /// No array bound to an input.
    #[error("no array bound to input `{0}`")]
    MissingInput(String),
    /// No value bound to a param.
    #[error("no value bound to param `{0}`")]
    MissingParam(String),
    /// A bound array has the wrong type or length.
    #[error("input `{name}`: expected {expected}, got {found}")]
    BadInput {
        /// Input name.
        name: String,
        /// Expected type and length.
        expected: String,
        /// What was bound.
        found: String,
    },
    /// A bound scalar has the wrong type.
    #[error("param `{name}` must be {expected}")]
    BadParam {
        /// Param name.
        name: String,
        /// Expected type.
        expected: DType,
    },
    /// A row reduction's columns do not divide the lane count.
    #[error("row reduction over {cols} columns does not divide n = {n}")]
    RowsDoNotDivide {
        /// Columns per row.
        cols: u32,
        /// Lane count.
        n: usize,
    },
    /// Zero lanes.
    #[error("n must be at least 1")]
    Empty,
}

/// Checks that `inputs` and `params` bind every input and param of `graph` for `n` lanes.
pub fn check_bindings(
    graph: &Graph,
    n: usize,
    inputs: &HashMap<String, HostArray>,
    params: &HashMap<String, Scalar>,
) -> Result<(), BindError> {
    if n == 0 {
        return Err(BindError::Empty);
    }
    for (id, name) in graph.inputs() {
        let node = graph.node(id);
        let array = inputs
            .get(name)
            .ok_or_else(|| BindError::MissingInput(name.into()))?;
        let width = node.shape.width();
        let type_ok = matches!(
            (node.dtype, array),
            (DType::F32, HostArray::F32(_)) | (DType::U32 | DType::Bool, HostArray::U32(_))
        );
        if !type_ok || array.len() != n * width {
            return Err(BindError::BadInput {
                name: name.into(),
                expected: format!("{} x {}", n * width, node.dtype),
                found: match array {
                    HostArray::F32(v) => format!("{} x f32", v.len()),
                    HostArray::U32(v) => format!("{} x u32", v.len()),
                },
            });
        }
    }
    for (id, name) in graph.params() {
        let dtype = graph.node(id).dtype;
        match (dtype, params.get(name)) {
            (_, None) => return Err(BindError::MissingParam(name.into())),
            (DType::F32, Some(Scalar::F32(_))) | (DType::U32, Some(Scalar::U32(_))) => {}
            _ => {
                return Err(BindError::BadParam {
                    name: name.into(),
                    expected: dtype,
                });
            }
        }
    }
    check_rows(graph, n)
}

/// Checks that every row reduction's width divides the lane count `n`.
pub fn check_rows(graph: &Graph, n: usize) -> Result<(), BindError> {
    for node in graph.nodes() {
        if let Op::RowReduce(_, _, cols) = node.op
            && !n.is_multiple_of(cols as usize)
        {
            return Err(BindError::RowsDoNotDivide { cols, n });
        }
    }
    Ok(())
}
