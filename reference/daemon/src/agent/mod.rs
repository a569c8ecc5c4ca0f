//! Native agent-session restore in the daemon (phux ADR-0068): the plugin registry
//! of integration templates ([`registry`]), pane metadata with its record rules
//! ([`meta`]) and the one-shot session-creation results ([`created`]). Every parse and validation is vx-agentsession's; this module holds
//! what the daemon owns: where plugins live, which ones are enabled, and who may
//! write which key. The verbs are in `reactor/agent_verbs.rs`.

pub mod created;
pub mod meta;
pub mod registry;

pub use registry::Integrations;

/// The limits of this module, in one table.
pub mod limits {
    /// Metadata keys a pane may hold.
    pub const MAX_META_KEYS: usize = 64;
    /// Bytes of one metadata key.
    pub const MAX_META_KEY_BYTES: usize = 255;
    /// Bytes of one ordinary metadata value (a record has its own, smaller bound).
    pub const MAX_META_VALUE_BYTES: usize = 16_384;
    /// Unread one-shot `session.created/v1/*` results one connection may hold.
    pub const MAX_CREATED_RESULTS_PER_CONNECTION: usize = 64;
    /// Plugin directories read per load.
    pub const MAX_PLUGINS: usize = 256;
    /// Integration templates read per plugin.
    pub const MAX_INTEGRATIONS_PER_PLUGIN: usize = 64;
    /// Bytes of a `plugin.toml`.
    pub const MAX_PLUGIN_MANIFEST_BYTES: u64 = 16_384;
}
