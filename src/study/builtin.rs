//! The studies perflab carries, embedded in the binary; `perflab study NAME --print` writes
//! one out as a file to edit.

/// Name and text of each built-in study, in the order `perflab study` lists them.
pub const STUDIES: [(&str, &str); 5] = [
    ("gray-thumper", include_str!("builtin/gray-thumper.toml")),
    ("ral-x4500", include_str!("builtin/ral-x4500.toml")),
    ("bestperf-igen", include_str!("builtin/bestperf-igen.toml")),
    (
        "bestperf-mail-cache-batch-power",
        include_str!("builtin/bestperf-mail-cache-batch-power.toml"),
    ),
    (
        "bestperf-hpc-flash-landscape",
        include_str!("builtin/bestperf-hpc-flash-landscape.toml"),
    ),
];

/// A built-in study's text.
pub fn text(name: &str) -> Option<&'static str> {
    STUDIES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The built-in studies' names.
pub fn names() -> Vec<&'static str> {
    STUDIES.iter().map(|(n, _)| *n).collect()
}
