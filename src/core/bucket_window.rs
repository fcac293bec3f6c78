//! The bucketed sliding window: time split into buckets of `precision` ms,
//! one counter per bucket, a running total, eviction from the oldest end.
//!
//! Bucket `b` covers the ms `b*P ..= (b+1)*P - 1`. At `now` the window is
//! `(now - window, now]`; a bucket counts while any of its ms is inside it,
//! and leaves as soon as its last ms has left (`(b+1)*P - 1 <= now - window`).
//! Every ms of the window therefore lies in a counted bucket (never more than
//! `limit` admitted in any window-length interval), and what is counted
//! beyond the window is at most one bucket (denied early by at most one
//! bucket width).
//!
//! The state is one plain hash, read through [`HashView`] and written as
//! [`HashWrite`] data, so the decision runs over a real hash (host) or over
//! [`MemoryHash`] (tests) with any `now`. Field by field:
//!
//! | field | value |
//! |---|---|
//! | `h` | header: `kind,precision,newest,held,totals...[,current]` |
//! | `f` | RL.COUNT only: the counted field names, comma-separated |
//! | `<b>` | bucket `b` (decimal index): its counts, one per counted field |
//!
//! `kind` is `b` (RL.BUCKETS) or `c` (RL.COUNT); `newest` is the newest
//! bucket written; `held` says which older buckets have a field
//! ([`HeldBuckets`], hex); `totals` are the running totals of the held
//! buckets, one per counted field. For RL.BUCKETS, `current` is the count
//! of bucket `newest`, which lives in the header and gets its own field only
//! when a newer bucket starts: an admission into the current bucket reads
//! and writes the header alone (the first field of the hash: the cheapest
//! lookup in a listpack). RL.COUNT keeps its newest bucket in a field too:
//! with several counts the header would outgrow a listpack value (64 bytes)
//! and cost the compact encoding.
//!
//! Counts are plain canonical decimals joined by commas: a listpack stores a
//! lone small count as an integer in one or two bytes. (Releases before
//! 0.2 padded every count to 9 digits; such keys are read as they are and
//! rewritten plainly as they change.)

use smallvec::SmallVec;

use super::args::unsigned;
use super::buckets_request::BucketsRequest;
use super::decimal::Line;
use super::decision::Decision;
use super::error::RlError;
use super::expiry::Expiry;
use super::held_buckets::HeldBuckets;

/// Most buckets one window may need (`ceil(window / precision)`).
pub const MAX_BUCKETS: u64 = 1_000;

/// Buckets per window when `PRECISION` is not given.
pub const DEFAULT_BUCKETS: u64 = 60;

/// Clock readings (ms) the bucket commands accept: about year 33,658 either
/// side of the epoch. Bucket bounds and expiries computed from them stay far
/// from integer overflow.
pub const MAX_CLOCK_MS: i64 = 1_000_000_000_000_000;

pub const FIELD_HEADER: &[u8] = b"h";

/// Field names and values, inline up to 64 bytes (a listpack value's
/// default limit): the hot path reads and writes them without heap
/// allocations.
pub type Bytes = SmallVec<[u8; 64]>;

/// One count per counted field: 1 for RL.BUCKETS (inline), at most 8 for
/// RL.COUNT (more than 2 go to the heap; a smaller value is cheaper to move).
pub type Counts = SmallVec<[u64; 2]>;
pub const FIELD_NAMES: &[u8] = b"f";

/// Which command owns a key. The two layouts are alike but their counts mean
/// different things, so one command refuses the other's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Buckets,
    Count,
}

impl Kind {
    /// The header's first item.
    pub fn tag(self) -> &'static [u8] {
        match self {
            Kind::Buckets => b"b",
            Kind::Count => b"c",
        }
    }

    pub fn command(self) -> &'static str {
        match self {
            Kind::Buckets => "RL.BUCKETS",
            Kind::Count => "RL.COUNT",
        }
    }

    /// Whether the newest bucket's counts live in the header (RL.BUCKETS)
    /// rather than in the bucket's own field (RL.COUNT).
    fn header_holds_newest(self) -> bool {
        self == Kind::Buckets
    }

    fn from_tag(tag: &[u8]) -> Option<Kind> {
        [Kind::Buckets, Kind::Count]
            .into_iter()
            .find(|k| k.tag() == tag)
    }
}

/// Read access to the key's hash. Implementations never write.
pub trait HashView {
    /// False when the key does not exist.
    fn exists(&mut self) -> bool;
    /// The value of `field`, if present.
    fn get(&mut self, field: &[u8]) -> Option<Bytes>;
}

/// What an admitted call writes. A denied call writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashWrite {
    /// The header's new value: every write sets it, first.
    pub header: Bytes,
    /// Other fields set to these values: the bucket that got or keeps a
    /// field of its own, RL.COUNT's names. All values are absolute, never
    /// increments.
    pub fields: SmallVec<[(Bytes, Bytes); 1]>,
    /// Bucket fields that left the window (each one exists).
    pub delete: Vec<Bytes>,
    /// The key must live until the newest bucket leaves the window.
    pub expiry: Expiry,
}

impl HashWrite {
    /// Every field set and its value, the header first.
    pub fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let others = self.fields.iter().map(|(f, v)| (&f[..], &v[..]));
        std::iter::once((FIELD_HEADER, &self.header[..])).chain(others)
    }
}

/// The stored state of a key, from its header (and names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub kind: Kind,
    pub precision: u64,
    pub newest: i64,
    /// Which buckets older than `newest` have a field.
    pub held: HeldBuckets,
    pub totals: Counts,
    /// Counts of bucket `newest` (RL.BUCKETS: from the header, the bucket
    /// has no field of its own).
    pub current: Counts,
    /// RL.COUNT field names, in the order of the counts; empty for RL.BUCKETS.
    pub names: Vec<Vec<u8>>,
}

/// The field name of bucket `b`.
pub fn bucket_field(b: i64) -> Bytes {
    let mut line: Line<21> = Line::new();
    line.signed(b);
    Bytes::from_slice(line.as_slice())
}

fn push_counts<const N: usize>(line: &mut Line<N>, counts: &[u64]) {
    for (i, &c) in counts.iter().enumerate() {
        if i > 0 {
            line.byte(b',');
        }
        line.unsigned(c, 1);
    }
}

/// Counts as stored: canonical decimals joined by commas.
pub fn encode_counts(counts: &[u64]) -> Bytes {
    // At most eight counts (RL.COUNT), each at most 21 bytes with its comma.
    let mut line: Line<192> = Line::new();
    push_counts(&mut line, counts);
    Bytes::from_slice(line.as_slice())
}

/// Parses stored counts (zero-padded ones too, as earlier releases wrote
/// them); `None` when they are not ours.
pub fn decode_counts(bytes: &[u8]) -> Option<Counts> {
    let mut counts = Counts::new();
    for item in bytes.split(|&b| b == b',') {
        counts.push(unsigned(item)?);
    }
    Some(counts)
}

/// The header value: `kind,precision,newest,held,totals...[,current...]`
/// (`current` empty for RL.COUNT).
pub fn encode_header(
    kind: Kind,
    precision: i64,
    newest: i64,
    held: &HeldBuckets,
    totals: &[u64],
    current: &[u64],
) -> Bytes {
    let mut line: Line = Line::new();
    line.bytes(kind.tag());
    for v in [precision, newest] {
        line.byte(b',');
        line.signed(v);
    }
    line.byte(b',');
    held.write(&mut line);
    line.byte(b',');
    push_counts(&mut line, totals);
    if !current.is_empty() {
        line.byte(b',');
        push_counts(&mut line, current);
    }
    Bytes::from_slice(line.as_slice())
}

/// A stored value's comma-separated items, read left to right in one pass
/// (the header is read on every call).
struct Items<'a> {
    /// What follows the last separator; `None` once the last item is read.
    rest: Option<&'a [u8]>,
}

impl<'a> Items<'a> {
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        match rest.iter().position(|&b| b == b',') {
            Some(end) => {
                self.rest = Some(&rest[end + 1..]);
                Some(&rest[..end])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }

    /// The next item as a number: an optional `-` and 1 to 18 digits (rl
    /// writes no longer one, and the sum cannot overflow). Digits are read
    /// and summed in one pass up to the separator.
    fn int(&mut self) -> Option<i64> {
        let rest = self.rest?;
        let neg = rest.first() == Some(&b'-');
        let start = usize::from(neg);
        let mut at = start;
        let mut v: i64 = 0;
        while let Some(&b) = rest.get(at) {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 || at - start == 18 {
                break;
            }
            v = v * 10 + i64::from(digit);
            at += 1;
        }
        self.rest = match rest.get(at) {
            None => None,
            Some(b',') => Some(&rest[at + 1..]),
            Some(_) => return None,
        };
        if at == start {
            return None;
        }
        Some(if neg { -v } else { v })
    }

    /// `bytes` as one such number and nothing else (a bucket field's name).
    fn whole_int(bytes: &[u8]) -> Option<i64> {
        let mut items = Items { rest: Some(bytes) };
        let v = items.int()?;
        items.rest.is_none().then_some(v)
    }
}

/// `precision` fits `window`: at most the window and at most
/// [`MAX_BUCKETS`] buckets.
pub fn check_precision(window_ms: u64, precision: u64) -> Result<(), RlError> {
    if precision > window_ms {
        return Err(RlError::PrecisionAboveWindow);
    }
    if window_ms.div_ceil(precision) > MAX_BUCKETS {
        return Err(RlError::TooManyBuckets { max: MAX_BUCKETS });
    }
    Ok(())
}

/// The bucket width when `PRECISION` is not given: the window in
/// [`DEFAULT_BUCKETS`] buckets, rounded up, at least 1 ms.
pub fn default_precision(window_ms: u64) -> u64 {
    window_ms.div_ceil(DEFAULT_BUCKETS).max(1)
}

/// The header's items as stored, before they are checked against the
/// command and the names.
struct Header {
    kind: Kind,
    precision: i64,
    newest: i64,
    held: HeldBuckets,
    /// Totals, then (RL.BUCKETS) the newest bucket's counts.
    counts: Counts,
}

impl Header {
    /// `None` for anything rl did not write. One pass, no error values
    /// made on the way (the header is read on every call).
    fn parse(bytes: &[u8]) -> Option<Header> {
        let mut items = Items { rest: Some(bytes) };
        let kind = Kind::from_tag(items.next()?)?;
        let precision = items.int()?;
        let newest = items.int()?;
        let held = HeldBuckets::parse(items.next()?)?;
        let mut counts = Counts::new();
        while items.rest.is_some() {
            counts.push(items.int()?.try_into().ok()?);
        }
        Some(Header {
            kind,
            precision,
            newest,
            held,
            counts,
        })
    }
}

/// Reads the key's state. `None` for a missing key; an error when the key
/// belongs to the other command or holds a hash rl did not write.
pub fn load(view: &mut impl HashView, kind: Kind) -> Result<Option<State>, RlError> {
    if !view.exists() {
        return Ok(None);
    }
    let header = view.get(FIELD_HEADER).ok_or(RlError::ForeignHash)?;
    let Header {
        kind: found,
        precision,
        newest,
        held,
        counts,
    } = Header::parse(&header).ok_or(RlError::ForeignHash)?;
    if found != kind {
        return Err(RlError::WrongKind {
            found: found.command(),
            wanted: kind.command(),
        });
    }
    let names: Vec<Vec<u8>> = match kind {
        Kind::Buckets => Vec::new(),
        Kind::Count => view
            .get(FIELD_NAMES)
            .ok_or(RlError::ForeignHash)?
            .split(|&b| b == b',')
            .map(<[u8]>::to_vec)
            .collect(),
    };
    let width = names.len().max(1);
    let stored = if kind.header_holds_newest() {
        2 * width
    } else {
        width
    };
    if precision < 1 || counts.len() != stored {
        return Err(RlError::ForeignHash);
    }
    let max_index = MAX_CLOCK_MS / precision;
    if !(-max_index..=max_index).contains(&newest) {
        return Err(RlError::ForeignHash);
    }
    let (totals, current) = counts.split_at(width);
    let current = if kind.header_holds_newest() {
        Counts::from_slice(current)
    } else {
        field_counts(view, newest, width)?
    };
    Ok(Some(State {
        kind,
        precision: precision as u64,
        newest,
        held,
        totals: Counts::from_slice(totals),
        current,
        names,
    }))
}

/// Bucket `b`'s own field as counts (zeros when absent), `width` of them.
fn field_counts(view: &mut impl HashView, b: i64, width: usize) -> Result<Counts, RlError> {
    let mut counts = match view.get(&bucket_field(b)) {
        Some(raw) => decode_counts(&raw).ok_or(RlError::ForeignHash)?,
        None => Counts::new(),
    };
    if counts.len() > width {
        return Err(RlError::ForeignHash);
    }
    counts.resize(width, 0);
    Ok(counts)
}

/// The bucket width to use: the key's own when it exists (an explicit
/// different `PRECISION` is an error, buckets cannot be re-cut), else the
/// requested one, else the default. It must fit the window.
pub fn resolve_precision(
    window_ms: u64,
    requested: Option<u64>,
    state: Option<&State>,
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
    check_precision(window_ms, precision)?;
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
        let live: SmallVec<[i64; 8]> = held.bits().map(|i| s.newest - 1 - i as i64).collect();
        if stale.len() <= live.len() {
            // Copies by `from_slice`: a SmallVec's `clone` goes item by item.
            let mut totals = Counts::from_slice(&s.totals);
            for &b in &stale {
                for (t, c) in totals.iter_mut().zip(field_counts(view, b, width)?) {
                    *t = t.saturating_sub(c);
                }
            }
            totals
        } else {
            // Most have left: sum the newest bucket and the held ones that
            // still count.
            let mut totals = Counts::from_slice(&s.current);
            totals.resize(width, 0);
            for &b in &live {
                for (t, c) in totals.iter_mut().zip(field_counts(view, b, width)?) {
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
    field_counts(view, b, width)
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
    let header = encode_header(kind, win.precision, win.target, &held, totals, in_header);
    if let (Kind::Count, Some(names)) = (kind, names) {
        fields.push((Bytes::from_slice(FIELD_NAMES), names.join(&b","[..]).into()));
    }
    if !kind.header_holds_newest() {
        fields.push((bucket_field(win.target), encode_counts(bucket)));
    } else if let Some(newest) = flush {
        fields.push((bucket_field(newest), encode_counts(&win.newest_counts)));
    }
    HashWrite {
        header,
        fields,
        delete: win.stale.iter().map(|&b| bucket_field(b)).collect(),
        expiry: Expiry::new(win.leaves_at(win.target), win.window_ms),
    }
}

/// An RL.BUCKETS decision and, when admitted, its write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketsOutcome {
    pub decision: Decision,
    /// `Some` only when admitted.
    pub write: Option<HashWrite>,
}

/// Decides an RL.BUCKETS request at `now`, as one RL.BUCKETS call.
pub fn decide(
    view: &mut impl HashView,
    req: &BucketsRequest,
    now: i64,
) -> Result<BucketsOutcome, RlError> {
    decide_within(view, req, now, MAX_BUCKETS)
}

/// Decides an RL.BUCKETS request at `now` for a window of at most
/// `max_buckets` buckets (RL.ALL shares [`MAX_BUCKETS`] between its BUCKETS
/// clauses, so one call reads a bounded number of fields). Pure: the hash
/// is only read, and every check that can fail happens before anything is
/// written.
pub fn decide_within(
    view: &mut impl HashView,
    req: &BucketsRequest,
    now: i64,
    max_buckets: u64,
) -> Result<BucketsOutcome, RlError> {
    let state = load(view, Kind::Buckets)?;
    let precision = resolve_precision(req.window_ms, req.precision, state.as_ref())?;
    if max_buckets < MAX_BUCKETS && req.window_ms.div_ceil(precision) > max_buckets {
        return Err(RlError::SharedBuckets {
            max: max_buckets,
            total: MAX_BUCKETS,
        });
    }
    let win = slide(view, state.as_ref(), req.window_ms, precision, now)?;
    let held = win.totals.first().copied().unwrap_or(0);

    if held.saturating_add(req.cost) <= req.limit {
        let mut bucket = win.target_counts(1);
        bucket[0] = bucket[0].saturating_add(req.cost);
        let write = write(&win, Kind::Buckets, &bucket, &[held + req.cost], None);
        return Ok(BucketsOutcome {
            decision: Decision {
                allowed: true,
                remaining: req.limit - held - req.cost,
                retry_after_ms: 0,
                reset_after_ms: (write.expiry.needed_ms - now).max(0) as u64,
            },
            write: Some(write),
        });
    }

    // Denied: walk the counted buckets oldest first until enough cost
    // leaves; the request fits when that bucket leaves.
    let newest = win.newest.unwrap_or(win.target);
    let need = held.saturating_add(req.cost) - req.limit;
    let mut freed = 0u64;
    let mut retry_at = None;
    // Oldest first: the held buckets (highest bit first), then the newest.
    let held_buckets = win.held.bits_down().map(|i| newest - 1 - i as i64);
    for b in held_buckets.chain([newest]) {
        freed = freed.saturating_add(read_bucket(view, &win, b, 1)?[0]);
        if freed >= need {
            retry_at = Some(win.leaves_at(b));
            break;
        }
    }
    let reset_at = win.leaves_at(newest);
    let retry_at = retry_at.unwrap_or(reset_at);
    Ok(BucketsOutcome {
        decision: Decision {
            allowed: false,
            remaining: req.limit.saturating_sub(held),
            retry_after_ms: (retry_at - now).max(1) as u64,
            reset_after_ms: (reset_at - now).max(0) as u64,
        },
        write: None,
    })
}

/// An in-memory hash with the server's semantics (tests and benches).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryHash {
    pub fields: std::collections::BTreeMap<Vec<u8>, Vec<u8>>,
    pub expire_at_ms: Option<i64>,
}

impl MemoryHash {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies a write the way the host does on the hash.
    pub fn apply(&mut self, w: &HashWrite) {
        for (f, v) in w.pairs() {
            self.fields.insert(f.to_vec(), v.to_vec());
        }
        for f in &w.delete {
            self.fields.remove(&f[..]);
        }
        if let Some(at) = w.expiry.next(self.expire_at_ms) {
            self.expire_at_ms = Some(at);
        }
    }

    /// Number of bucket fields held.
    pub fn bucket_count(&self) -> usize {
        self.bucket_indexes().len()
    }
}

impl MemoryHash {
    /// The bucket fields the header says exist (its newest bucket's own
    /// field too for RL.COUNT), to compare with the fields there are.
    pub fn fields_the_header_names(&mut self) -> Vec<i64> {
        let Some(h) = self.fields.get(FIELD_HEADER) else {
            return Vec::new();
        };
        let kind = Kind::from_tag(&h[..1]).expect("an rl header");
        let state = load(self, kind).expect("an rl key").expect("present");
        let mut named: Vec<i64> = state
            .held
            .bits()
            .map(|i| state.newest - 1 - i as i64)
            .collect();
        if !kind.header_holds_newest() {
            named.push(state.newest);
        }
        named.sort_unstable();
        named
    }

    /// The bucket fields there are.
    pub fn bucket_indexes(&self) -> Vec<i64> {
        let mut found: Vec<i64> = self
            .fields
            .keys()
            .filter_map(|k| Items::whole_int(k))
            .collect();
        found.sort_unstable();
        found
    }
}

impl HashView for MemoryHash {
    fn exists(&mut self) -> bool {
        !self.fields.is_empty()
    }
    fn get(&mut self, field: &[u8]) -> Option<Bytes> {
        self.fields.get(field).map(|v| Bytes::from_slice(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, precision: u64, cost: u64) -> BucketsRequest {
        BucketsRequest {
            limit,
            window_ms,
            precision: Some(precision),
            cost,
        }
    }

    fn call(h: &mut MemoryHash, r: &BucketsRequest, now: i64) -> [i64; 4] {
        let out = decide(h, r, now).unwrap();
        if let Some(w) = &out.write {
            h.apply(w);
        }
        out.decision.to_reply()
    }

    #[test]
    fn table_of_requests_with_explicit_times() {
        // limit 3 per 1000 ms in buckets of 100 ms; rows: (now, cost, reply).
        // Bucket b leaves at (b+1)*100 - 1 + 1000.
        let r = |cost| req(3, 1000, 100, cost);
        let rows: &[(i64, u64, [i64; 4])] = &[
            // bucket 100 (10_000..=10_099) leaves at 11_099
            (10_000, 1, [1, 2, 0, 1099]),
            (10_050, 1, [1, 1, 0, 1049]),
            // bucket 101 leaves at 11_199
            (10_150, 1, [1, 0, 0, 1049]),
            // full: the two in bucket 100 leave together at 11_099
            (10_300, 1, [0, 0, 799, 899]),
            (11_098, 1, [0, 0, 1, 101]),
            (11_099, 1, [1, 1, 0, 1000]),
            (11_099, 1, [1, 0, 0, 1000]),
            // cost 2 needs bucket 101 (leaves at 11_199) and 110 gone: 110
            // leaves at 12_099
            (11_150, 2, [0, 0, 949, 949]),
            (11_199, 2, [0, 1, 900, 900]),
            (12_099, 2, [1, 1, 0, 1000]),
            // long idle gap: everything has left
            (50_000, 3, [1, 0, 0, 1099]),
        ];
        let mut h = MemoryHash::new();
        for &(now, cost, want) in rows {
            assert_eq!(call(&mut h, &r(cost), now), want, "at {now} cost {cost}");
        }
        // After the idle gap only the new bucket is held, in the header:
        // kind, precision, newest, no older bucket held, total, newest
        // bucket's count.
        assert_eq!(h.bucket_count(), 0);
        assert_eq!(h.fields.len(), 1);
        assert_eq!(h.fields[&b"h"[..]], b"b,100,500,0,3,3");
        // It must live until 51_099; the expiry moved with a slack of
        // window/4.
        assert_eq!(h.expire_at_ms, Some(51_099 + 250));
    }

    #[test]
    fn denied_request_writes_nothing() {
        let mut h = MemoryHash::new();
        call(&mut h, &req(1, 1000, 100, 1), 0);
        let before = h.clone();
        let out = decide(&mut h, &req(1, 1000, 100, 1), 500).unwrap();
        assert!(!out.decision.allowed);
        assert_eq!(out.write, None);
        assert_eq!(h, before);
    }

    /// A hash view that counts the fields read.
    struct Counting<'a>(&'a mut MemoryHash, usize);

    impl HashView for Counting<'_> {
        fn exists(&mut self) -> bool {
            self.0.exists()
        }
        fn get(&mut self, field: &[u8]) -> Option<Bytes> {
            self.1 += 1;
            self.0.get(field)
        }
    }

    /// A call reads at most half the buckets of its window: the side of
    /// the window that is smaller (those that left, or those that count),
    /// and none at all when everything has left.
    #[test]
    fn a_call_reads_the_smaller_side_of_the_window() {
        let r = req(1_000_000, 1000, 10, 1);
        let filled = || {
            let mut h = MemoryHash::new();
            for t in (0..1000).step_by(10) {
                call(&mut h, &r, t);
            }
            assert_eq!(h.bucket_count(), 99);
            h
        };
        // (now, filled buckets that still count, most fields read)
        for (now, counted, max_reads) in [(1_100, 90, 11), (1_900, 10, 11), (5_000, 0, 1)] {
            let mut h = filled();
            let mut view = Counting(&mut h, 0);
            let out = decide(&mut view, &r, now).unwrap();
            assert!(view.1 <= max_reads, "at {now}: {} reads", view.1);
            assert_eq!(out.decision.remaining, 1_000_000 - counted - 1, "at {now}");
            h.apply(&out.write.unwrap());
            // The old ones that count have fields (the newest just got
            // its own); those that left are gone.
            assert_eq!(h.bucket_count() as u64, counted, "at {now}");
        }
    }

    #[test]
    fn eviction_deletes_only_existing_stale_buckets() {
        let mut h = MemoryHash::new();
        let r = req(100, 1000, 100, 1);
        call(&mut h, &r, 0); // bucket 0
        call(&mut h, &r, 250); // bucket 2
        call(&mut h, &r, 999); // bucket 9
        assert_eq!(
            h.bucket_count(),
            2,
            "buckets 0 and 2 have fields, 9 is the header's"
        );
        // At 1_300 buckets 0..=2 have left (bucket 2 left at 1_299).
        let w = decide(&mut h, &r, 1_300).unwrap().write.unwrap();
        assert_eq!(w.delete, [bucket_field(0), bucket_field(2)]);
        h.apply(&w);
        // Bucket 9 got its own field when bucket 13 started: bit 3
        // (13 - 1 - 3) of the held set.
        assert_eq!(h.fields[&b"9"[..]], b"1");
        assert_eq!(h.fields[&b"h"[..]], b"b,100,13,8,2,1");
    }

    #[test]
    fn default_precision_is_a_sixtieth_of_the_window() {
        let cases = [(60_000, 1_000), (1, 1), (59, 1), (61, 2), (1_000, 17)];
        for (window, want) in cases {
            assert_eq!(default_precision(window), want, "window {window}");
            assert!(check_precision(window, want).is_ok());
        }
    }

    #[test]
    fn stored_precision_wins_and_a_different_one_is_refused() {
        let mut h = MemoryHash::new();
        call(&mut h, &req(10, 1000, 100, 1), 0);
        let default = BucketsRequest {
            limit: 10,
            window_ms: 2000,
            precision: None,
            cost: 1,
        };
        // A new window without PRECISION keeps the key's 100 ms buckets.
        assert_eq!(call(&mut h, &default, 10), [1, 8, 0, 2089]);
        assert_eq!(
            decide(&mut h, &req(10, 1000, 50, 1), 20),
            Err(RlError::PrecisionMismatch { stored: 100 })
        );
        // The key's width must still fit the new window.
        let short = BucketsRequest {
            window_ms: 50,
            ..default
        };
        assert_eq!(
            decide(&mut h, &short, 20),
            Err(RlError::PrecisionAboveWindow)
        );
    }

    #[test]
    fn clock_stepping_back_never_over_admits() {
        let mut h = MemoryHash::new();
        let r = req(2, 1000, 100, 1);
        assert_eq!(call(&mut h, &r, 5_000), [1, 1, 0, 1099]);
        // Back 3 s: the event goes into the newest bucket (50), not bucket 20.
        assert_eq!(call(&mut h, &r, 2_000), [1, 0, 0, 4099]);
        assert_eq!(h.fields[&b"h"[..]], b"b,100,50,0,2,2");
        assert_eq!(call(&mut h, &r, 2_001), [0, 0, 4098, 4098]);
    }

    #[test]
    fn other_kinds_and_foreign_hashes_are_refused() {
        let mut h = MemoryHash::new();
        h.fields
            .insert(b"h".to_vec(), b"c,1,0,0,000000001".to_vec());
        assert_eq!(
            decide(&mut h, &req(1, 10, 1, 1), 0),
            Err(RlError::WrongKind {
                found: "RL.COUNT",
                wanted: "RL.BUCKETS"
            })
        );
        let mut h = MemoryHash::new();
        h.fields.insert(b"name".to_vec(), b"x".to_vec());
        assert_eq!(
            decide(&mut h, &req(1, 10, 1, 1), 0),
            Err(RlError::ForeignHash)
        );
        let mut h = MemoryHash::new();
        call(&mut h, &req(5, 1000, 100, 1), 0);
        h.fields
            .insert(b"h".to_vec(), b"b,100,0,0,lots,000000001".to_vec());
        assert_eq!(
            decide(&mut h, &req(5, 1000, 100, 1), 1),
            Err(RlError::ForeignHash)
        );
    }

    #[test]
    fn headers_parse_exactly_as_written() {
        let h = Header::parse(b"b,1000,-17,1f,000000003,000000001").expect("rl's");
        assert_eq!((h.kind, h.precision, h.newest), (Kind::Buckets, 1000, -17));
        assert_eq!((h.held.highest(), &h.counts[..]), (Some(4), &[3, 1][..]));
        let h = Header::parse(b"c,1,999999999999999999,0,0").expect("18 digits");
        assert_eq!(
            (h.newest, &h.counts[..]),
            (999_999_999_999_999_999, &[0][..])
        );
        for bad in [
            &b""[..],
            b"b",
            b"x,1,0,0,1,1",
            b"b,1,0,0,1,1,",
            b"b,1,,0,1,1",
            b"b,1,-,0,1,1",
            b"b,1,0,0,-1,1",
            b"b,1,0,0,1 ,1",
            b"b,1,1000000000000000000,0,1,1",
            b"b,1,0,g,1,1",
        ] {
            assert!(
                Header::parse(bad).is_none(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn the_longest_header_fits_a_line() {
        let max = [u64::MAX; crate::core::count_request::MAX_FIELDS];
        let bits = crate::core::held_buckets::MAX_BITS;
        let mut held = HeldBuckets::default();
        (0..bits).for_each(|i| held.insert(i));
        let h = encode_header(Kind::Count, i64::MIN, i64::MIN, &held, &max, &[]);
        assert_eq!(h.len(), 1 + 2 * 21 + 1 + bits / 4 + max.len() * 21);
        let one = [u64::MAX];
        let h = encode_header(Kind::Buckets, i64::MIN, i64::MIN, &held, &one, &one);
        assert_eq!(h.len(), 1 + 2 * 21 + 1 + bits / 4 + 2 * 21);
    }

    #[test]
    fn counters_are_plain_and_padded_ones_still_read() {
        assert_eq!(&encode_counts(&[1])[..], b"1");
        assert_eq!(&encode_counts(&[0])[..], b"0");
        assert_eq!(
            &encode_counts(&[1_000_000_000_000_000])[..],
            b"1000000000000000"
        );
        assert_eq!(&encode_counts(&[3, 12])[..], b"3,12");
        assert_eq!(decode_counts(b"3,12").as_deref(), Some(&[3, 12][..]));
        // As releases before 0.2 wrote them.
        assert_eq!(
            decode_counts(b"000000003,000000012").as_deref(),
            Some(&[3, 12][..])
        );
        assert_eq!(decode_counts(b"18446744073709551616"), None, "overflow");
        assert_eq!(decode_counts(b"1x"), None);
        assert_eq!(decode_counts(b""), None);
        assert_eq!(decode_counts(b"1,,2"), None);
        assert_eq!(decode_counts(b"-1"), None);
    }

    #[test]
    fn extreme_times_do_not_panic() {
        let r = req(
            crate::core::buckets_request::MAX_LIMIT,
            crate::core::slide_request::MAX_WINDOW_MS,
            crate::core::slide_request::MAX_WINDOW_MS / MAX_BUCKETS,
            1,
        );
        let mut h = MemoryHash::new();
        for now in [0, 1, 9_000_000_000_000, -5] {
            assert_eq!(call(&mut h, &r, now)[0], 1);
        }
    }

    /// Admitted cost in `(t - window, t]`.
    fn admitted_in(admitted: &[(i64, u64)], t: i64, window: i64) -> u64 {
        admitted
            .iter()
            .filter(|&&(s, _)| s > t - window && s <= t)
            .map(|&(_, c)| c)
            .sum()
    }

    proptest! {
        /// Random sequences: no window-length interval ever holds more than
        /// `limit`; a request is admitted exactly when the counted buckets
        /// leave room; a denial's retry_after_ms is exact under the rule.
        #[test]
        fn never_over_admits_and_retry_is_honest(
            limit in 1u64..10,
            window in 1u64..60,
            precision_pick in 1u64..60,
            steps in proptest::collection::vec((0i64..15, 1u64..10), 1..150),
        ) {
            let precision = precision_pick.min(window);
            prop_assume!(check_precision(window, precision).is_ok());
            let (w, p) = (window as i64, precision as i64);
            let mut h = MemoryHash::new();
            let mut admitted: Vec<(i64, u64)> = Vec::new();
            let mut now = 1_000;
            // Cost held by buckets that still count at `t`.
            let counted = |admitted: &[(i64, u64)], t: i64| -> u64 {
                admitted.iter()
                    .filter(|&&(s, _)| (s.div_euclid(p) + 1) * p - 1 > t - w)
                    .map(|&(_, c)| c).sum()
            };
            for (dt, cost) in steps {
                now += dt;
                let cost = cost.min(limit);
                let r = req(limit, window, precision, cost);
                let out = decide(&mut h, &r, now).unwrap();
                prop_assert_eq!(out.decision.allowed, counted(&admitted, now) + cost <= limit);
                if let Some(wr) = &out.write {
                    h.apply(wr);
                    admitted.push((now, cost));
                    prop_assert!(h.bucket_count() as u64 <= window.div_ceil(precision) + 1);
                    prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
                } else {
                    let wait = out.decision.retry_after_ms as i64;
                    prop_assert!(wait >= 1);
                    let mut later = h.clone();
                    prop_assert!(decide(&mut later, &r, now + wait).unwrap().decision.allowed);
                    prop_assert!(!decide(&mut later, &r, now + wait - 1).unwrap().decision.allowed);
                    // Denied early by at most one bucket width: the window
                    // stretched by one bucket (less 1 ms) is really full.
                    prop_assert!(admitted_in(&admitted, now, w + p - 1) + cost > limit);
                }
            }
            for &(t, _) in &admitted {
                prop_assert!(admitted_in(&admitted, t, w) <= limit);
            }
        }
    }
}

/// Time anomalies with explicit clocks: a clock stepping back and forth,
/// the largest windows, `now` at the integer limits, forged metadata. No
/// over-admission, no panic, no unbounded loop.
#[cfg(test)]
mod time_anomalies {
    use super::*;
    use crate::core::buckets_request::MAX_LIMIT;
    use crate::core::slide_request::MAX_WINDOW_MS;
    use proptest::prelude::*;

    fn req(limit: u64, window_ms: u64, precision: Option<u64>, cost: u64) -> BucketsRequest {
        BucketsRequest {
            limit,
            window_ms,
            precision,
            cost,
        }
    }

    const EXTREME_NOWS: [i64; 8] = [
        i64::MIN,
        i64::MIN + 1,
        -1,
        0,
        1,
        MAX_CLOCK_MS,
        i64::MAX - 1,
        i64::MAX,
    ];

    #[test]
    fn now_at_the_integer_limits_is_an_error_or_a_sane_decision() {
        for window in [1, 1000, MAX_WINDOW_MS] {
            for now in EXTREME_NOWS {
                let mut h = MemoryHash::new();
                let r = req(MAX_LIMIT, window, None, MAX_LIMIT);
                match decide(&mut h, &r, now) {
                    Ok(out) => {
                        assert!(out.decision.allowed, "{now}");
                        let w = out.write.unwrap();
                        assert!(w.expiry.needed_ms > now);
                        h.apply(&w);
                        let denied = decide(&mut h, &req(MAX_LIMIT, window, None, 1), now).unwrap();
                        assert!(!denied.decision.allowed);
                        assert!(denied.decision.retry_after_ms >= 1);
                        assert!(denied.decision.retry_after_ms <= window + window / 60 + 1);
                    }
                    Err(e) => assert_eq!(e, RlError::Internal("server clock out of range")),
                }
            }
        }
    }

    #[test]
    fn forged_metadata_far_apart_or_at_the_limits_is_refused_at_once() {
        // A hash shaped like rl's with a newest bucket or a held set no rl
        // write produces: computing with it could overflow or walk far.
        let too_many = vec![b'f'; crate::core::held_buckets::MAX_BITS / 4 + 1];
        let forged: &[(&[u8], &[u8])] = &[
            (b"9223372036854775807", b"0"),
            (b"-9223372036854775807", b"0"),
            (b"1700000000000", b"0"),
            (b"1700000", &too_many),
            (b"1700000", b"F"),
            (b"1700000", b""),
            (b"1700000", b"-1"),
        ];
        for &(newest, held) in forged {
            let mut h = MemoryHash::new();
            let mut header = b"b,1000,".to_vec();
            for part in [newest, b",", held, b",000000001,000000001"] {
                header.extend_from_slice(part);
            }
            h.fields.insert(b"h".to_vec(), header);
            let r = req(5, 60_000, None, 1);
            assert_eq!(
                decide(&mut h, &r, 1_700_000_000_000),
                Err(RlError::ForeignHash),
                "n {newest:?} held {held:?}"
            );
        }
    }

    proptest! {
        /// A clock that steps back now and then (by up to 5 s) and
        /// otherwise runs on: in real time, no window-length interval ever
        /// holds more than `limit` admitted units, and a denial's wait is at
        /// least 1 ms.
        #[test]
        fn a_clock_stepping_back_never_over_admits(
            limit in 1u64..6,
            window in 1u64..2_000,
            precision_pick in 1u64..200,
            steps in proptest::collection::vec(
                (0i64..1_500, 0u8..6, 1i64..5_000, 1u64..6), 1..120),
        ) {
            let precision = precision_pick.min(window);
            prop_assume!(check_precision(window, precision).is_ok());
            let mut h = MemoryHash::new();
            let mut admitted: Vec<(i64, u64)> = Vec::new();
            let (mut real, mut offset) = (100_000i64, 0i64);
            for (dt, back_pick, back, cost) in steps {
                real += dt;
                if back_pick == 0 {
                    offset += back;
                }
                let now = real - offset;
                let r = req(limit, window, Some(precision), cost.min(limit));
                let out = decide(&mut h, &r, now).unwrap();
                prop_assert!(out.decision.to_reply().iter().all(|&v| v >= 0));
                match &out.write {
                    Some(w) => {
                        h.apply(w);
                        admitted.push((real, r.cost));
                        let in_window: u64 = admitted.iter()
                            .filter(|&&(t, _)| t > real - window as i64)
                            .map(|&(_, c)| c).sum();
                        prop_assert!(in_window <= limit, "{} in the window at {}", in_window, real);
                        prop_assert!(w.expiry.needed_ms > now);
                        prop_assert!(h.bucket_count() as u64 <= MAX_BUCKETS + 1);
                        prop_assert_eq!(h.fields_the_header_names(), h.bucket_indexes());
                    }
                    None => prop_assert!(out.decision.retry_after_ms >= 1),
                }
            }
        }
    }
}
