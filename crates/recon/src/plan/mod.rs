//! The plan: which source column is compared with which target column, in
//! which value class, after which conversions and rules. Built from the two
//! tables' metadata before any data is read, so every schema problem is
//! reported at once and up front.
//!
//! - `classes`: value classes (which physical types compare by value);
//! - `typing`: the types text columns take from their partners;
//! - `align`: column pairing, type checks, the `recon schema` screen;
//! - `convert`: conversions and normalization rules, applied per batch.

pub(crate) mod align;
pub(crate) mod classes;
pub(crate) mod convert;
pub(crate) mod typing;

use std::path::Path;

pub(crate) use align::{ColumnPair, ComparePlan};
pub(crate) use convert::{Prep, Refused};

use crate::config::{AlignOptions, InputOptions};
use crate::error::{ReconError, Result};
use crate::input::{open_table, Source, Table};
use crate::side::Side;

/// Opens both tables and plans the comparison, reading metadata only. The
/// plan may hold problems; a diff refuses to run then, `recon schema` shows them.
///
/// Text columns (CSV, NDJSON, Hive partition values) take the types of the
/// columns they pair with on a typed side before the plan is made.
///
/// `-` and pipes are spooled under the system temp dir; see [`preflight_in`].
pub(crate) fn preflight(
    source: impl Into<Source>,
    target: impl Into<Source>,
    align_opts: &AlignOptions,
    inputs: &[InputOptions; 2],
) -> Result<(Table, Table, ComparePlan)> {
    preflight_in(
        &source.into(),
        &target.into(),
        align_opts,
        inputs,
        &std::env::temp_dir(),
    )
}

/// [`preflight`], spooling `-` (stdin) and pipes under `temp_dir`.
pub(crate) fn preflight_in(
    source: &Source,
    target: &Source,
    align_opts: &AlignOptions,
    inputs: &[InputOptions; 2],
    temp_dir: &Path,
) -> Result<(Table, Table, ComparePlan)> {
    let stdin = |s: &Source| matches!(s, Source::Spec(p) if p.as_os_str() == "-");
    if stdin(source) && stdin(target) {
        return Err(ReconError::Usage(
            "source and target are both '-': stdin can be read only once, so give one side as a file (or a pipe such as <(zcat x.csv.gz))".into(),
        ));
    }
    let mut src = open_table(source, &inputs[0], Side::Source, temp_dir)?;
    let mut tgt = open_table(target, &inputs[1], Side::Target, temp_dir)?;
    crate::input::refuse_unused_csv_options([(&inputs[0], &src), (&inputs[1], &tgt)])?;
    typing::resolve(
        &mut src,
        &mut tgt,
        align_opts,
        inputs[0].infer_types || inputs[1].infer_types,
    )?;
    let mut plan = align::plan(&src.schema, &tgt.schema, align_opts);
    if !plan.is_compatible() {
        // Lines before a header that sniffing would not skip make column
        // names of a title: say so first, with the option that skips them.
        for t in [&tgt, &src] {
            if let Some((_, hint)) = &t.text.preamble_hint {
                plan.problems
                    .insert(0, format!("{}: {hint}", t.path.display()));
            }
        }
    }
    Ok((src, tgt, plan))
}

impl ComparePlan {
    /// Per compared column of one side: its conversion and rules.
    pub fn preps(&self, side: Side) -> Vec<Prep> {
        self.columns
            .iter()
            .map(|c| {
                let (column, convert) = match side {
                    Side::Source => (&c.source_name, &c.source_convert),
                    Side::Target => (&c.target_name, &c.target_convert),
                };
                Prep::new(column.clone(), convert.clone(), c.normalize.clone())
            })
            .collect()
    }

    /// Per compared column of one side: its index in the table's schema.
    pub fn indices(&self, side: Side) -> Vec<usize> {
        self.columns
            .iter()
            .map(|c| match side {
                Side::Source => c.source_index,
                Side::Target => c.target_index,
            })
            .collect()
    }
}
