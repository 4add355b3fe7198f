//! The comparison planned from two tables' schemas, on the driver and again
//! on each worker.

use arrow::datatypes::SchemaRef;

use super::digester::SideDigester;
use crate::config::{AlignOptions, InputOptions};
use crate::digest::RowEncoder;
use crate::error::{ReconError, Result};
use crate::input::{Source, Table};
use crate::modes::fingerprint::{by_position, name_order, refuse_keyed};
use crate::modes::{keyed, stages};
use crate::plan::classes::ValueClass;
use crate::plan::ComparePlan;
use crate::side::Side;

/// A comparison planned from two tables' schemas.
pub struct DistributedPlan {
    /// How the columns pair, convert and compare.
    pub plan: ComparePlan,
    tables: [Table; 2],
    /// Fingerprints and keyless diffs: the position of the `--by` column.
    by: Option<usize>,
    /// Keyed diffs: the key columns' positions in the plan, in key order.
    key: Vec<usize>,
}

/// One table for planning: its name (for reports and messages) and the
/// Arrow schema its batches arrive in.
pub struct Described {
    /// The table's name in reports and messages.
    pub name: String,
    /// The Arrow schema of the table's batches.
    pub schema: SchemaRef,
}

fn empty_source(t: &Described) -> Result<Source> {
    Source::batches(t.name.clone(), t.schema.clone(), Vec::new())
}

impl DistributedPlan {
    /// Plans a keyless diff of two tables from their schemas, as the
    /// library plans two in-memory tables (and refuses what it refuses).
    pub fn pair(source: &Described, target: &Described, align: &AlignOptions) -> Result<Self> {
        if align.key.is_some() || !align.tolerances.is_empty() {
            return Err(ReconError::Internal(
                "a keyed diff is planned with DistributedPlan::keyed".into(),
            ));
        }
        Self::planned(source, target, align)
    }

    /// Plans a keyed diff (`align.key`, tolerances allowed) of two tables.
    ///
    /// The engine groups and buckets rows by the key columns' own values,
    /// so those must be the values recon compares: a key column the plan
    /// converts or normalizes (a cast, trim, case or time-zone rule) is
    /// refused, as is a nested key column (the engine's hash of a struct
    /// does not know recon's equality of its fields). Other columns may be
    /// converted: recon's own keyed diff judges the kept rows.
    pub fn keyed(source: &Described, target: &Described, align: &AlignOptions) -> Result<Self> {
        if align.key.is_none() {
            return Err(ReconError::Internal("a keyed plan without a key".into()));
        }
        let mut planned = Self::planned(source, target, align)?;
        let shape = keyed::shape(&planned.plan, align).map_err(ReconError::Usage)?;
        let converted = planned.converted();
        for &i in &shape.key {
            let c = &planned.plan.columns[i];
            if converted.contains(&c.source_name) {
                return Err(ReconError::Usage(format!(
                    "key column {:?} is converted before it is compared (a cast, or a trim, case, rounding, empty-as-NULL or time-zone rule); on Spark the key is matched by its own values, so convert it in Spark first (for example with F.trim or .cast) and pass the converted column",
                    c.source_name
                )));
            }
            if matches!(
                c.class(),
                ValueClass::List(_) | ValueClass::Struct(_) | ValueClass::Map(..)
            ) {
                return Err(ReconError::Usage(format!(
                    "key column {:?} is nested ({}); on Spark a key is one or more scalar columns",
                    c.source_name,
                    c.source_field.data_type()
                )));
            }
        }
        planned.key = shape.key;
        Ok(planned)
    }

    fn planned(source: &Described, target: &Described, align: &AlignOptions) -> Result<Self> {
        let inputs = [InputOptions::default(), InputOptions::default()];
        let (src, tgt, plan) = stages::plan(
            &empty_source(source)?,
            &empty_source(target)?,
            align,
            &inputs,
            None,
        )?;
        Ok(DistributedPlan {
            plan,
            tables: [src, tgt],
            by: None,
            key: Vec::new(),
        })
    }

    /// A keyless diff's plan that also breaks the unmatched rows down by
    /// the compared column `by` (a source name), as `recon diff --by`.
    pub fn with_by(mut self, by: Option<&str>) -> Result<Self> {
        let Some(name) = by else {
            return Ok(self);
        };
        if !self.key.is_empty() {
            return Err(ReconError::Usage(
                "`--by` with `--key` is not built yet: use `--by` without `--key`".into(),
            ));
        }
        let at = self.plan.columns.iter().position(|c| c.source_name == name);
        self.by =
            Some(at.ok_or_else(|| {
                ReconError::Usage(format!("`--by {name}`: not a compared column"))
            })?);
        Ok(self)
    }

    /// Keyed diffs: the key columns of `side`, in key order.
    pub fn key(&self, side: Side) -> Vec<String> {
        self.key
            .iter()
            .map(|&i| {
                let c = &self.plan.columns[i];
                match side {
                    Side::Source => c.source_name.clone(),
                    Side::Target => c.target_name.clone(),
                }
            })
            .collect()
    }

    /// Plans the fingerprint of one table (columns in name order, as
    /// `recon fingerprint` does), optionally grouped by the column `by`.
    pub fn table(table: &Described, align: &AlignOptions, by: Option<&str>) -> Result<Self> {
        refuse_keyed(align)?;
        let inputs = [InputOptions::default(), InputOptions::default()];
        let source = empty_source(table)?;
        let (src, tgt, plan) = stages::plan(&source, &source, align, &inputs, None)?;
        let plan = name_order(plan);
        let by = by_position(&plan, by)?;
        Ok(DistributedPlan {
            plan,
            tables: [src, tgt],
            by,
            key: Vec::new(),
        })
    }

    /// The position of the grouping column (fingerprints, keyless diffs).
    pub fn by(&self) -> Option<usize> {
        self.by
    }

    /// The table's name on `side`.
    pub fn name(&self, side: Side) -> String {
        self.tables[side.index()].path.display().to_string()
    }

    /// Per side and table column, whether values are text (quoted in the
    /// text summary).
    pub fn quoted(&self) -> [Vec<bool>; 2] {
        self.tables.each_ref().map(stages::quoted_columns)
    }

    /// The compared columns (source names) whose values the plan converts
    /// or normalizes on either side before digesting. An engine that
    /// digests the values as they are (the JVM digest) cannot run such a
    /// plan.
    pub fn converted(&self) -> Vec<String> {
        let [source, target] = [Side::Source, Side::Target].map(|s| self.plan.preps(s));
        self.plan
            .columns
            .iter()
            .zip(source.iter().zip(&target))
            .filter(|(_, (s, t))| !s.is_noop() || !t.is_noop())
            .map(|(c, _)| c.source_name.clone())
            .collect()
    }

    /// A digester for `side`'s batches.
    pub fn digester(&self, side: Side) -> SideDigester {
        let table = &self.tables[side.index()];
        let columns = self.plan.indices(side);
        let classes = columns
            .iter()
            .map(|&i| ValueClass::of(table.schema.field(i).data_type()))
            .collect();
        SideDigester {
            name: table.path.display().to_string(),
            width: table.schema.fields().len(),
            columns,
            classes,
            prep: self.plan.preps(side),
            encoder: RowEncoder::new(),
            digests: Vec::new(),
            values: Vec::new(),
            arrays: Vec::new(),
        }
    }
}
