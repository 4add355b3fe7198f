//! Which input a row came from.

/// The two inputs of a comparison: the pre-migration source and the
/// post-migration target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The pre-migration table (the first given).
    Source,
    /// The post-migration table (the second given).
    Target,
}

impl Side {
    /// Both sides, source first.
    pub const BOTH: [Side; 2] = [Side::Source, Side::Target];

    /// 0 for the source, 1 for the target: the side's index in pairs.
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
