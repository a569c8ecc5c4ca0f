//! Test tools other crates reuse (the `testing` feature): the harness drives the S3
//! twins through [`reply_loss::ReplyLossProxy`] too.

pub mod reply_loss;
