//! The window arithmetic: which buckets still count at `now`, the totals
//! without those that left (read from the smaller side), and the write of an
//! accepted event.

use smallvec::SmallVec;

use super::held::HeldBuckets;
use super::layout::{
    encode_counts, encode_header, field_counts, Bytes, Counts, HashView, HashWrite, Kind, Naming,
    State, FIELD_NAMES, MAX_CLOCK_MS,
};
use super::request::{check_precision_within, default_precision, MAX_BUCKETS};
use crate::core::error::RlError;
use crate::core::expiry::Expiry;

/// The bucket width to use: the key's own when it exists (an explicit
/// different `PRECISION` is an error, buckets cannot be re-cut), else the
/// requested one, else the default. It must fit the window.
pub fn resolve_precision(
    window_ms: u64,
    requested: Option<u64>,
    state: Option<&State>,
) -> Result<u64, RlError> {
    resolve_precision_within(window_ms, requested, state, MAX_BUCKETS)
}

/// [`resolve_precision`] for a window of at most `max_buckets` buckets.
pub fn resolve_precision_within(
    window_ms: u64,
    requested: Option<u64>,
    state: Option<&State>,
    max_buckets: u64,
) -> Result<u64, RlError> {
    let precision = match (state, requested) {
        (Some(s), Some(p)) if s.precision != p => {
            return Err(RlError::PrecisionMismatch {
                stored: s.precision,
            })
        }
        (Some(s), _) => s.precision,
        (None, Some(p)) => p,
        (None, None) => default_precision(window_ms),
    };
    check_precision_within(window_ms, precision, max_buckets)?;
    Ok(precision)
}

/// The window as seen at `now`: stale buckets found (not yet removed) and the
/// totals without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub precision: i64,
    pub window_ms: i64,
    pub now: i64,
    /// Oldest bucket that still counts at `now`.
    pub live_from: i64,
    /// The bucket a new event goes to: the current one, or the newest
    /// written if the clock stepped back (counting it later never over-admits).
    pub target: i64,
    /// Newest bucket written before this call (`None` for a new key).
    pub newest: Option<i64>,
    /// How the stored fields are named (ring names for a new key).
    pub naming: Naming,
    /// Which buckets older than `newest` have a field, after eviction.
    pub held: HeldBuckets,
    /// Counts of that newest bucket (RL.BUCKETS: from the header; RL.COUNT:
    /// from its field).
    pub newest_counts: Counts,
    /// Totals over the buckets that still count.
    pub totals: Counts,
    /// Existing bucket fields that left the window.
    pub stale: Vec<i64>,
}

impl Window {
    /// The absolute time at which bucket `b` leaves the window.
    pub fn leaves_at(&self, b: i64) -> i64 {
        (b + 1) * self.precision - 1 + self.window_ms
    }

    /// The counts of the target bucket before this call's event, `width`
    /// of them: the header's when the target is the newest bucket, zeros
    /// for a bucket not yet written.
    pub fn target_counts(&self, width: usize) -> Counts {
        let mut counts = if self.newest == Some(self.target) {
            Counts::from_slice(&self.newest_counts)
        } else {
            Counts::new()
        };
        counts.resize(width, 0);
        counts
    }
}

/// Evicts (on paper) the buckets that left the window at `now`. Reads at
/// most the buckets between the stored oldest and newest, a bounded number.
pub fn slide(
    view: &mut impl HashView,
    state: Option<&State>,
    window_ms: u64,
    precision: u64,
    now: i64,
) -> Result<Window, RlError> {
    if !(-MAX_CLOCK_MS..=MAX_CLOCK_MS).contains(&now) {
        return Err(RlError::Internal("server clock out of range"));
    }
    let p = precision as i64;
    let w = window_ms as i64;
    let live_from = (now - w + 1).div_euclid(p);
    let current = now.div_euclid(p);
    let Some(s) = state else {
        return Ok(Window {
            precision: p,
            window_ms: w,
            now,
            live_from,
            target: current,
            newest: None,
            naming: Naming::Ring,
            held: HeldBuckets::default(),
            newest_counts: Counts::new(),
            totals: Counts::new(),
            stale: Vec::new(),
        });
    };
    // Bit i is bucket newest - 1 - i: it has left when below `live_from`.
    let first_stale = usize::try_from(s.newest - live_from).unwrap_or(0);
    let mut held = s.held.clone();
    // Oldest first; only the digits holding stale bits are visited.
    let mut stale: SmallVec<[i64; 8]> = held
        .bits_down()
        .take_while(|&i| i >= first_stale)
        .map(|i| s.newest - 1 - i as i64)
        .collect();
    held.truncate(first_stale);
    // An RL.COUNT newest bucket has a field too, leaving with the rest.
    if !s.kind.header_holds_newest() && s.newest < live_from {
        stale.push(s.newest);
    }
    // The totals without the buckets that left, reading whichever side is
    // smaller, so a call reads at most half the buckets a window holds.
    // Every field read is checked to be rl's; those that left are removed
    // by the names the (checked) header gives them.
    let width = s.totals.len();
    let totals = if live_from > s.newest {
        // Everything has left (a pause of a window): nothing to read.
        let mut zeros = Counts::new();
        zeros.resize(width, 0);
        zeros
    } else {
        // Counted, not collected: a window of 60 held buckets would put
        // them on the heap for a comparison.
        if stale.len() <= held.count() {
            // Copies by `from_slice`: a SmallVec's `clone` goes item by item.
            let mut totals = Counts::from_slice(&s.totals);
            for &b in &stale {
                for (t, c) in totals
                    .iter_mut()
                    .zip(field_counts(view, s.naming, b, width)?)
                {
                    *t = t.saturating_sub(c);
                }
            }
            totals
        } else {
            // Most have left: sum the newest bucket and the held ones that
            // still count.
            let mut totals = Counts::from_slice(&s.current);
            totals.resize(width, 0);
            for b in held.bits().map(|i| s.newest - 1 - i as i64) {
                for (t, c) in totals
                    .iter_mut()
                    .zip(field_counts(view, s.naming, b, width)?)
                {
                    *t = t.saturating_add(c);
                }
            }
            totals
        }
    };
    let target = current.max(s.newest);
    Ok(Window {
        precision: p,
        window_ms: w,
        now,
        live_from,
        target,
        newest: Some(s.newest),
        naming: s.naming,
        held,
        newest_counts: Counts::from_slice(&s.current),
        totals,
        stale: stale.into_vec(),
    })
}

/// Reads bucket `b`'s counts (zeros when absent), `width` of them: as
/// loaded for the newest bucket, its own field for an older one.
pub fn read_bucket(
    view: &mut impl HashView,
    win: &Window,
    b: i64,
    width: usize,
) -> Result<Counts, RlError> {
    if win.newest == Some(b) {
        let mut counts = Counts::from_slice(&win.newest_counts);
        counts.resize(width, 0);
        return Ok(counts);
    }
    field_counts(view, win.naming, b, width)
}

/// The write for an accepted event: the header with the new totals; the
/// target bucket's new counts (RL.BUCKETS: in the header, plus the previous
/// newest bucket's own field when the event starts a newer bucket and that
/// one still counts; RL.COUNT: in the bucket's field); `f` (RL.COUNT) when
/// `names` is given, i.e. for a new key or a new name; all as absolute
/// values, plus the eviction and the expiry.
pub fn write(
    win: &Window,
    kind: Kind,
    bucket: &[u64],
    totals: &[u64],
    names: Option<&[Vec<u8>]>,
) -> HashWrite {
    let mut fields = SmallVec::new();
    let in_header: &[u64] = if kind.header_holds_newest() {
        bucket
    } else {
        &[]
    };
    // The previous newest bucket, when a newer one starts and it still
    // counts, keeps (RL.COUNT) or gets (RL.BUCKETS) a field of its own.
    let mut held = win.held.clone();
    let mut flush = None;
    if let Some(newest) = win.newest.filter(|&n| n < win.target) {
        // Held buckets are at or after `live_from`, and the target at most
        // a window past it: the shift is at most MAX_BUCKETS.
        let by = (win.target - newest) as usize;
        held.shift_up(by);
        let counted = newest >= win.live_from;
        let has_field = if kind.header_holds_newest() {
            counted && win.newest_counts.iter().any(|&c| c > 0)
        } else {
            counted
        };
        if has_field {
            held.insert(by - 1);
            flush = kind.header_holds_newest().then_some(newest);
        }
    }
    // A key of an earlier build takes ring names once none of its fields
    // stays (an RL.COUNT newest bucket that stays keeps its field): every
    // name it had goes in this write's deletions.
    let naming = match win.naming {
        Naming::Index
            if held.is_empty()
                && (kind.header_holds_newest() || win.newest != Some(win.target)) =>
        {
            Naming::Ring
        }
        naming => naming,
    };
    let header = encode_header(
        kind,
        naming,
        win.precision,
        win.target,
        &held,
        totals,
        in_header,
    );
    if let (Kind::Count, Some(names)) = (kind, names) {
        fields.push((Bytes::from_slice(FIELD_NAMES), names.join(&b","[..]).into()));
    }
    if !kind.header_holds_newest() {
        fields.push((naming.field(win.target), encode_counts(bucket)));
    } else if let Some(newest) = flush {
        fields.push((naming.field(newest), encode_counts(&win.newest_counts)));
    }
    // Stale fields go by the names they have. One a new field reuses (ring
    // names repeat after 4,096 buckets; a converted key's old index may be
    // a ring name) is set, not deleted: the host sets before it deletes.
    let delete = win
        .stale
        .iter()
        .map(|&b| win.naming.field(b))
        .filter(|name| fields.iter().all(|(f, _)| f != name))
        .collect();
    HashWrite {
        header,
        fields,
        delete,
        expiry: Expiry::new(win.leaves_at(win.target), win.window_ms),
    }
}
