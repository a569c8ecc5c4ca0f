//! The parts of RFC §2's `.recovery` config the store acts on, and the pure time rules
//! built on them (whole-checkpoint age, future capture, text expiry). "Now" is always
//! a parameter: nothing here reads the clock.

use vx_format::limits::{config, effective_max_bytes};
use vx_format::{PlainText, Timestamp};

/// `.terminal_text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextMode {
    Off,
    Plain,
}

/// Store-relevant recovery settings. The daemon validates ranges (config check); the
/// store takes what it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    pub max_checkpoints: u64,
    pub max_checkpoint_bytes: u64,
    pub max_age_seconds: u64,
    pub terminal_text: TextMode,
    pub text_max_age_seconds: u64,
}

impl Default for StoreConfig {
    /// RFC §2's defaults.
    fn default() -> Self {
        StoreConfig {
            max_checkpoints: config::DEFAULT_MAX_CHECKPOINTS,
            max_checkpoint_bytes: vx_format::limits::DEFAULT_MAX_CHECKPOINT_BYTES,
            max_age_seconds: config::DEFAULT_MAX_AGE_SECONDS,
            terminal_text: TextMode::Off,
            text_max_age_seconds: config::DEFAULT_TEXT_MAX_AGE_SECONDS,
        }
    }
}

impl StoreConfig {
    /// The byte limit readers and the writer apply: `min(configured, 64 MiB)`.
    pub fn max_bytes(&self) -> u64 {
        effective_max_bytes(self.max_checkpoint_bytes)
    }
}

/// Whether a whole checkpoint is usable at `now`, by its `captured_at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Age {
    Current,
    /// Older than `max_age_seconds`.
    Expired,
    /// Captured later than now: unavailable until forgotten or the clock catches up.
    Future,
}

fn seconds_to_ms(seconds: u64) -> i64 {
    i64::try_from(seconds)
        .unwrap_or(i64::MAX)
        .saturating_mul(1000)
}

/// RFC §2: a checkpoint *older than* `max_age_seconds` is expired; exactly that old
/// is still current. A capture time after now is future.
pub fn checkpoint_age(captured_at: Timestamp, now: Timestamp, max_age_seconds: u64) -> Age {
    if captured_at > now {
        Age::Future
    } else if now.0.saturating_sub(captured_at.0) > seconds_to_ms(max_age_seconds) {
        Age::Expired
    } else {
        Age::Current
    }
}

/// RFC §4: plain text is available at restore only while the current config allows
/// text, the clock has not gone back past `saved_at`, and now is before the earlier
/// of the stored expiry and `saved_at` plus the current text age.
pub fn text_available(text: &PlainText, cfg: &StoreConfig, now: Timestamp) -> bool {
    if cfg.terminal_text != TextMode::Plain || now < text.saved_at {
        return false;
    }
    let by_config = text
        .saved_at
        .0
        .saturating_add(seconds_to_ms(cfg.text_max_age_seconds));
    now.0 < text.expires_at.0.min(by_config)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY_MS: i64 = 86_400_000;

    #[test]
    fn age_boundaries() {
        let now = Timestamp(10 * DAY_MS);
        let week = config::DEFAULT_MAX_AGE_SECONDS;
        assert_eq!(
            checkpoint_age(Timestamp(now.0 - 7 * DAY_MS), now, week),
            Age::Current
        );
        assert_eq!(
            checkpoint_age(Timestamp(now.0 - 7 * DAY_MS - 1), now, week),
            Age::Expired
        );
        assert_eq!(checkpoint_age(now, now, week), Age::Current);
        assert_eq!(checkpoint_age(Timestamp(now.0 + 1), now, week), Age::Future);
    }

    #[test]
    fn text_expiry_takes_the_earlier_limit_and_refuses_a_backward_clock() {
        let cfg = StoreConfig {
            terminal_text: TextMode::Plain,
            text_max_age_seconds: 3600,
            ..Default::default()
        };
        let text = PlainText {
            saved_at: Timestamp(1_000_000),
            expires_at: Timestamp(1_000_000 + 2 * 3_600_000),
            screen: vec![],
            history: vec![],
        };
        assert!(text_available(&text, &cfg, Timestamp(1_000_000)));
        assert!(text_available(
            &text,
            &cfg,
            Timestamp(1_000_000 + 3_600_000 - 1)
        ));
        assert!(
            !text_available(&text, &cfg, Timestamp(1_000_000 + 3_600_000)),
            "current config age wins"
        );
        assert!(
            !text_available(&text, &cfg, Timestamp(999_999)),
            "backward clock discards text"
        );
        let long = StoreConfig {
            text_max_age_seconds: 86_400,
            ..cfg
        };
        assert!(
            !text_available(&text, &long, Timestamp(1_000_000 + 2 * 3_600_000)),
            "stored expiry wins"
        );
        let off = StoreConfig {
            terminal_text: TextMode::Off,
            ..cfg
        };
        assert!(
            !text_available(&text, &off, Timestamp(1_000_000)),
            "current off forbids text"
        );
    }
}
