//! Valid checkpoint states built from unstructured bytes, for proptest and fuzzing.
//! (Filled in below.)
