//! Oracles shared by the fuzz targets (`fuzz_targets/`): the differential comparisons
//! against second implementations and the structure-aware generators that build
//! valid shapes and break one rule at a time. See fuzz/README.md.

pub mod blob_rules;
pub mod format_rules;
pub mod json_diff;
pub mod tar_diff;
pub mod verdict;
