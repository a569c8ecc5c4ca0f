//! Placeholder: being built (see issues).
