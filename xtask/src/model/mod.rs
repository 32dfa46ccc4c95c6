//! The cost model (see docs/cost-model.md).

pub mod formulas;
