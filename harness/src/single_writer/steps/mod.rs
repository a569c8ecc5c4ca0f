//! The single-writer suite's steps.

mod offline;
