//! recon's errors as Python exceptions: one class per [`ErrorKind`], all
//! subclasses of `recon.ReconError`, with the one-line message and option
//! hints spelled as this package's keyword arguments (`trim=["year"]`),
//! not as the command line's flags.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use recon::config::option_table::{self, Shape};
use recon::{ErrorKind, OptionHint};

create_exception!(recon, ReconError, PyException, "Every error recon raises.");
create_exception!(
    recon,
    UsageError,
    ReconError,
    "An argument is invalid or contradicts another; nothing was read."
);
create_exception!(
    recon,
    SchemaError,
    ReconError,
    "The two tables cannot be compared as they stand."
);
create_exception!(
    recon,
    InputError,
    ReconError,
    "An input is missing, unreadable, or holds a value recon refuses."
);
create_exception!(
    recon,
    ResourceError,
    ReconError,
    "The machine ran short: a full disk, or an I/O failure on recon's own files."
);
create_exception!(recon, CancelledError, ReconError, "The run was cancelled.");
create_exception!(
    recon,
    InternalError,
    ReconError,
    "An internal invariant failed: a bug in recon."
);

/// The shape of option `name`'s value, from the library's option table
/// (dicts of column to value, lists, switches named without a value).
fn shape(name: &str) -> Option<Shape> {
    option_table::spec(name).map(|o| o.shape)
}

/// A Python string literal.
fn literal(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

/// A scalar as Python writes it: a number bare, anything else quoted.
fn scalar(text: &str) -> String {
    if text.parse::<i64>().is_ok() || text.parse::<f64>().is_ok_and(f64::is_finite) {
        text.to_string()
    } else {
        literal(text)
    }
}

/// The keyword-argument spelling of a hint: `skip_rows=3`,
/// `trim=["year"]`, `map={"a": "b"}`, `header=False`.
pub(crate) fn keyword(hint: &OptionHint) -> String {
    let name = hint.name.as_str();
    let Some(value) = &hint.value else {
        return match name {
            "no_header" => "header=False".into(),
            _ if shape(name) == Some(Shape::Dict) => format!("{name}={{...}}"),
            _ if shape(name) == Some(Shape::List) => format!("{name}=[...]"),
            _ if shape(name) == Some(Shape::Switch) => format!("{name}=True"),
            // An option that takes a value, named for what it is.
            _ => format!("{name}=..."),
        };
    };
    if shape(name) == Some(Shape::Dict) {
        if let Some((k, v)) = value.split_once('=') {
            return format!("{name}={{{}: {}}}", literal(k), scalar(v));
        }
    }
    if shape(name) == Some(Shape::List) {
        let items: Vec<String> = value.split(',').map(literal).collect();
        return format!("{name}=[{}]", items.join(", "));
    }
    match name {
        "passes" if value != "auto" => format!("{name}={value}"),
        "skip_rows"
        | "source_skip_rows"
        | "target_skip_rows"
        | "threads"
        | "sample"
        | "max_parse_errors"
        | "max_unmatched_rows"
        | "max_unmatched_ratio"
        | "max_changed"
        | "max_missing" => format!("{name}={}", scalar(value)),
        _ => format!("{name}={}", literal(value)),
    }
}

/// The Python exception for a recon error. It carries `kind`, `path`
/// (the file it names, or None) and `hints` (the keyword arguments its
/// message suggests).
pub(crate) fn to_py(py: Python<'_>, e: recon::ReconError) -> PyErr {
    let message = recon::error::one_line(&e.render(&keyword));
    let err = match e.kind() {
        ErrorKind::Usage => UsageError::new_err(message),
        ErrorKind::Schema => SchemaError::new_err(message),
        ErrorKind::Input => InputError::new_err(message),
        ErrorKind::Resource => ResourceError::new_err(message),
        ErrorKind::Cancelled => CancelledError::new_err(message),
        _ => InternalError::new_err(message),
    };
    let value = err.value(py);
    let kind = format!("{:?}", e.kind()).to_lowercase();
    let path = e.path().map(|p| p.display().to_string());
    let hints: Vec<String> = e.hints().iter().map(keyword).collect();
    // Setting attributes on a fresh exception cannot fail in practice; if
    // it did, the message alone still tells.
    let _ = value.setattr("kind", kind);
    let _ = value.setattr("path", path);
    let _ = value.setattr("hints", hints);
    err
}

/// `keyword` for the package's own tests (tests/test_errors.py): a Rust
/// unit test of it would need a second, libpython-linked build of the
/// whole engine.
#[pyfunction]
#[pyo3(signature = (name, value=None))]
fn _hint_keyword(name: String, value: Option<String>) -> String {
    keyword(&OptionHint { name, value })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(_hint_keyword, m)?)?;
    m.add("ReconError", py.get_type::<ReconError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("SchemaError", py.get_type::<SchemaError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ResourceError", py.get_type::<ResourceError>())?;
    m.add("CancelledError", py.get_type::<CancelledError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
