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
//! | `<b mod 4096>` | bucket `b`: its counts, one per counted field |
//!
//! `kind` is `B` (RL.BUCKETS) or `C` (RL.COUNT); `newest` is the newest
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
//!
//! A bucket's field is named by its index modulo [`RING`] ([`Naming::Ring`]):
//! a listpack stores 0..4095 as a 13-bit integer (2 bytes), where a full
//! index (about 9e10 for 20 ms buckets) takes 8. The names stay unique
//! because every field a key holds is within [`super::held::MAX_BITS`]
//! (2,000) buckets of the newest. Keys of earlier builds name fields by the
//! full decimal index and carry the kind in lowercase (`b`, `c`:
//! [`Naming::Index`]); they are read, evicted, refunded and charged by those
//! names, and take the ring names at the first write that leaves them no
//! bucket field (all the older ones evicted in that same write).

use smallvec::SmallVec;

use super::held::HeldBuckets;
use crate::core::args::unsigned;
use crate::core::decimal::Line;
use crate::core::error::RlError;
use crate::core::expiry::Expiry;

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
    pub(crate) fn header_holds_newest(self) -> bool {
        self == Kind::Buckets
    }

    pub(crate) fn from_tag(tag: &[u8]) -> Option<Kind> {
        [Kind::Buckets, Kind::Count]
            .into_iter()
            .find(|k| k.tag() == tag)
    }

    /// The header's first item for a state whose fields are named by
    /// `naming`: the tag, in uppercase for ring names.
    fn state_tag(self, naming: Naming) -> &'static [u8] {
        match (self, naming) {
            (kind, Naming::Index) => kind.tag(),
            (Kind::Buckets, Naming::Ring) => b"B",
            (Kind::Count, Naming::Ring) => b"C",
        }
    }

    /// The kind and naming a state's first header item gives.
    pub(crate) fn from_state_tag(tag: &[u8]) -> Option<(Kind, Naming)> {
        match tag {
            b"B" => Some((Kind::Buckets, Naming::Ring)),
            b"C" => Some((Kind::Count, Naming::Ring)),
            _ => Kind::from_tag(tag).map(|k| (k, Naming::Index)),
        }
    }
}

/// Bucket names go round modulo this: 13-bit listpack integers, and more
/// than twice the widest held set a header may carry (no two fields a key
/// holds share a name).
pub const RING: i64 = 4096;
const _: () = assert!(RING > super::held::MAX_BITS as i64 + 1);

/// How a key names its bucket fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// Earlier builds: the full decimal index.
    Index,
    /// The index modulo [`RING`], 0 to 4095.
    Ring,
}

impl Naming {
    /// The field name of bucket `b`.
    pub fn field(self, b: i64) -> Bytes {
        let name = match self {
            Naming::Index => b,
            Naming::Ring => b.rem_euclid(RING),
        };
        let mut line: Line<21> = Line::new();
        line.signed(name);
        Bytes::from_slice(line.as_slice())
    }
}

/// Read access to the key's hash. Implementations never write.
pub trait HashView {
    /// False when the key does not exist.
    fn exists(&mut self) -> bool;
    /// The value of `field`, if present.
    fn get(&mut self, field: &[u8]) -> Option<Bytes>;
    /// The call is about to read up to `fields` bucket fields: a store may
    /// read the hash whole when that is cheaper. Answers stay the same.
    fn will_read(&mut self, _fields: usize) {}
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
    /// How its bucket fields are named.
    pub naming: Naming,
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
    naming: Naming,
    precision: i64,
    newest: i64,
    held: &HeldBuckets,
    totals: &[u64],
    current: &[u64],
) -> Bytes {
    let mut line: Line = Line::new();
    line.bytes(kind.state_tag(naming));
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
pub(super) struct Items<'a> {
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

    /// The block item `b<until>`, last in the header, if the next item is
    /// one: `Some(None)` when it is malformed or not last.
    fn block(&mut self) -> Option<Option<i64>> {
        let rest = self.rest?;
        if rest.first() != Some(&BLOCK_TAG) {
            return None;
        }
        self.rest = Some(&rest[1..]);
        // At most 15 digits: exact in the function edition's doubles.
        let until = self
            .int()
            .filter(|v| v.unsigned_abs() < 1_000_000_000_000_000);
        Some(until.filter(|_| self.rest.is_none()))
    }

    /// `bytes` as one such number and nothing else (a bucket field's name).
    pub(super) fn whole_int(bytes: &[u8]) -> Option<i64> {
        let mut items = Items { rest: Some(bytes) };
        let v = items.int()?;
        items.rest.is_none().then_some(v)
    }
}

/// The header's items as stored, before they are checked against the
/// command and the names.
pub(super) struct Header {
    pub(super) kind: Kind,
    pub(super) naming: Naming,
    pub(super) precision: i64,
    pub(super) newest: i64,
    pub(super) held: HeldBuckets,
    /// Totals, then (RL.BUCKETS) the newest bucket's counts.
    pub(super) counts: Counts,
}

impl Header {
    /// A header without a block (tests of the layout).
    #[cfg(test)]
    pub(super) fn parse(bytes: &[u8]) -> Option<Header> {
        match Self::parse_blocked(bytes)? {
            (Some(header), None) => Some(header),
            _ => None,
        }
    }

    /// The header and the block's end it carries: a trailing `,b<until>`
    /// item (RL.BUCKETS only). A key `RL.BLOCK` made holds only the kind
    /// and the block (`b,b<until>`): no state. `None` for anything rl did
    /// not write. One pass, no error values made on the way (the header is
    /// read on every call); the block item is told apart by its first byte
    /// where a count would start.
    #[inline(always)]
    pub(super) fn parse_blocked(bytes: &[u8]) -> Option<(Option<Header>, Option<i64>)> {
        let mut items = Items { rest: Some(bytes) };
        let (kind, naming) = Kind::from_state_tag(items.next()?)?;
        if let Some(until) = items.block() {
            // RL.BLOCK writes the lowercase tag alone: no fields to name.
            let until = until.filter(|_| naming == Naming::Index);
            return Some((None, Some(until?)));
        }
        let precision = items.int()?;
        let newest = items.int()?;
        let held = HeldBuckets::parse(items.next()?)?;
        let mut counts = Counts::new();
        let mut blocked_until = None;
        while items.rest.is_some() {
            if let Some(until) = items.block() {
                blocked_until = Some(until?);
                break;
            }
            counts.push(items.int()?.try_into().ok()?);
        }
        let header = Header {
            kind,
            naming,
            precision,
            newest,
            held,
            counts,
        };
        Some((Some(header), blocked_until))
    }
}

/// Where a block's end starts in a header: the `b` of its last item.
const BLOCK_TAG: u8 = b'b';

/// `header` (a state's header, or its kind's tag alone for a key without
/// state) carrying a block until `until`, or none: `<header>,b<until>`.
pub fn with_block(header: &[u8], until: Option<i64>) -> Bytes {
    let mut out = Bytes::from_slice(header);
    if let Some(until) = until {
        let mut line: Line<24> = Line::new();
        line.byte(b',');
        line.byte(BLOCK_TAG);
        line.signed(until);
        out.extend_from_slice(line.as_slice());
    }
    out
}

/// A stored header without its block item, if it has one (`b` alone for a
/// key `RL.BLOCK` made without state).
pub fn without_block(header: &[u8]) -> &[u8] {
    match header.iter().rposition(|&b| b == b',') {
        Some(at) if header.get(at + 1) == Some(&BLOCK_TAG) => &header[..at],
        _ => header,
    }
}

/// Reads the key's state. `None` for a missing key (or one holding only a
/// block); an error when the key belongs to the other command or holds a
/// hash rl did not write. The block a key may carry is [`load_blocked`]'s.
pub fn load(view: &mut impl HashView, kind: Kind) -> Result<Option<State>, RlError> {
    Ok(load_blocked(view, kind)?.0)
}

/// The key's state, as [`load`] reads it, and the end of the block its
/// header carries (held or past; RL.BUCKETS only: an RL.COUNT header with
/// one is not rl's).
#[inline(always)]
pub fn load_blocked(
    view: &mut impl HashView,
    kind: Kind,
) -> Result<(Option<State>, Option<i64>), RlError> {
    if !view.exists() {
        return Ok((None, None));
    }
    let header = view.get(FIELD_HEADER).ok_or(RlError::ForeignHash)?;
    let (parsed, blocked_until) = Header::parse_blocked(&header).ok_or(RlError::ForeignHash)?;
    let found = parsed.as_ref().map_or_else(
        || Kind::from_state_tag(&header[..1]).map_or(kind, |(k, _)| k),
        |h| h.kind,
    );
    if found != kind {
        return Err(RlError::WrongKind {
            found: found.command(),
            wanted: kind.command(),
        });
    }
    if blocked_until.is_some() && kind != Kind::Buckets {
        return Err(RlError::ForeignHash);
    }
    let Some(parsed) = parsed else {
        // A key RL.BLOCK made: its only field is the header.
        return Ok((None, blocked_until));
    };
    Ok((load_state(view, kind, parsed)?, blocked_until))
}

/// The state a parsed header names, checked against the command.
fn load_state(
    view: &mut impl HashView,
    kind: Kind,
    header: Header,
) -> Result<Option<State>, RlError> {
    let Header {
        kind: _,
        naming,
        precision,
        newest,
        held,
        counts,
    } = header;
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
        field_counts(view, naming, newest, width)?
    };
    Ok(Some(State {
        kind,
        naming,
        precision: precision as u64,
        newest,
        held,
        totals: Counts::from_slice(totals),
        current,
        names,
    }))
}

/// Bucket `b`'s own field as counts (zeros when absent), `width` of them.
pub(super) fn field_counts(
    view: &mut impl HashView,
    naming: Naming,
    b: i64,
    width: usize,
) -> Result<Counts, RlError> {
    let mut counts = match view.get(&naming.field(b)) {
        Some(raw) => decode_counts(&raw).ok_or(RlError::ForeignHash)?,
        None => Counts::new(),
    };
    if counts.len() > width {
        return Err(RlError::ForeignHash);
    }
    counts.resize(width, 0);
    Ok(counts)
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
    /// The names of the bucket fields the header says exist (its newest
    /// bucket's own field too for RL.COUNT), as numbers, to compare with
    /// the fields there are.
    pub fn fields_the_header_names(&mut self) -> Vec<i64> {
        let Some(h) = self.fields.get(FIELD_HEADER) else {
            return Vec::new();
        };
        let (kind, _) = Kind::from_state_tag(&h[..1]).expect("an rl header");
        let state = load(self, kind).expect("an rl key").expect("present");
        let mut named: Vec<i64> = state
            .held
            .bits()
            .map(|i| state.newest - 1 - i as i64)
            .collect();
        if !kind.header_holds_newest() {
            named.push(state.newest);
        }
        let name = |b: i64| Items::whole_int(&state.naming.field(b)).expect("a number");
        let mut named: Vec<i64> = named.into_iter().map(name).collect();
        named.sort_unstable();
        named
    }

    /// The bucket fields there are (their names as numbers).
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
