//! One side's row and column digests of a batch, as the CLI digests them.

use std::path::Path;

use arrow::array::{ArrayRef, RecordBatch};

use crate::digest::RowEncoder;
use crate::engine::scan::{prepare, refusal_error};
use crate::error::{ReconError, Result};
use crate::plan::classes::ValueClass;
use crate::plan::Prep;

/// Digests one side's batches as the CLI digests that side's rows.
pub struct SideDigester {
    pub(super) name: String,
    /// Columns the planned schema has; each batch must have as many.
    pub(super) width: usize,
    pub(super) columns: Vec<usize>,
    /// The planned value class of each compared column: a batch whose
    /// column arrives in another class is refused, never digested.
    pub(super) classes: Vec<ValueClass>,
    pub(super) prep: Vec<Prep>,
    pub(super) encoder: RowEncoder,
    /// The last batch's row digests.
    pub digests: Vec<u128>,
    /// The last batch's value digests per compared column (plan order),
    /// when asked for.
    pub values: Vec<Vec<u128>>,
    /// The last batch's compared columns after conversions and rules.
    pub arrays: Vec<ArrayRef>,
}

impl SideDigester {
    /// Digests `batch` (every column of the table, in its schema's order):
    /// fills `digests`, and with `per_column` also `values`.
    pub fn digest(&mut self, batch: &RecordBatch, per_column: bool) -> Result<()> {
        self.prepare(batch)?;
        let path = Path::new(&self.name);
        self.digests.clear();
        for v in &mut self.values {
            v.clear();
        }
        self.encoder
            .digests_with_columns(
                &self.arrays,
                &mut self.digests,
                per_column.then_some(&mut self.values),
            )
            .map_err(|m| ReconError::input(path, m))
    }

    /// Checks `batch` against the plan and fills `arrays`: its compared
    /// columns after the plan's conversions and rules, as they are digested.
    pub(crate) fn prepare(&mut self, batch: &RecordBatch) -> Result<()> {
        let path = Path::new(&self.name);
        if batch.num_columns() != self.width {
            return Err(ReconError::input(
                path,
                format!(
                    "a batch has {} columns, the planned schema {}",
                    batch.num_columns(),
                    self.width
                ),
            ));
        }
        let mut columns = Vec::with_capacity(self.columns.len());
        for (&i, class) in self.columns.iter().zip(&self.classes) {
            let array = batch.column(i);
            let arrived = ValueClass::of(array.data_type());
            if &arrived != class {
                return Err(ReconError::input(
                    path,
                    format!(
                        "column {:?} arrived as {} ({arrived:?}), planned as {class:?}",
                        batch.schema().field(i).name(),
                        array.data_type()
                    ),
                ));
            }
            columns.push(array.clone());
        }
        self.arrays = prepare(&self.prep, &columns).map_err(|r| refusal_error(path, r))?;
        Ok(())
    }
}
