//! Placeholder: being built (issue 4).
