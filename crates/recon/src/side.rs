//! Which input a row came from.

/// The two inputs of a comparison: the pre-migration source and the
/// post-migration target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Source,
    Target,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Source, Side::Target];

    pub fn index(self) -> usize {
        match self {
            Side::Source => 0,
            Side::Target => 1,
        }
    }

    /// "source" or "target", as reports and messages spell it.
    pub fn name(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Target => "target",
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
