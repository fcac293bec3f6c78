//! RL.SLIDE's worst cases: a key of 10^6 live entries, the stale backlog,
//! and RL.ALL over 8 SLIDE clauses.

use super::*;

/// Runs `n` `RL.SLIDE key limit window COST cost` calls (or their
/// `FCALL`s), pipelined.
pub(super) fn fill_slide(c: &mut Connection, key: &str, calls: u64, cost: u64) {
    let mut left = calls;
    while left > 0 {
        let chunk = left.min(200);
        let mut pipe = redis::pipe();
        for _ in 0..chunk {
            if FUNCTIONS.load(Ordering::Relaxed) {
                pipe.cmd("FCALL").arg("rl_slide").arg(1);
            } else {
                pipe.cmd("RL.SLIDE");
            }
            pipe.arg(key)
                .arg(SLIDE_MAX_LIMIT)
                .arg(SLIDE_LIVE_WINDOW)
                .arg("COST")
                .arg(cost)
                .ignore();
        }
        let () = pipe.query(c).unwrap();
        left -= chunk;
    }
}

/// RL.SLIDE, RL.PEEK SLIDE and RL.ALL over 8 SLIDE clauses: live, then
/// (some build on what the previous left) a second later, stale.
pub(super) fn slide_cases(c: &mut Connection, out: &mut Vec<Measured>) {
    let none = &mut |_: &mut Connection| {};

    // ---- RL.SLIDE: a 1,000,000-entry key, live. ----
    let big = "{w}:s0";
    let calls = SLIDE_MAX_LIMIT / SLIDE_MAX_COST;
    let _: () = redis::cmd("DEL").arg(big).query(c).unwrap();
    fill_slide(c, big, calls - REPEATS as u64, SLIDE_MAX_COST);
    // The other RL.ALL SLIDE keys, filled now so they leave with it.
    let others = all_keys("s");
    for k in &others[1..] {
        let _: () = redis::cmd("DEL").arg(k).query(c).unwrap();
        fill_slide(c, k, ALL_SLIDE_BACKLOG / SLIDE_MAX_COST, SLIDE_MAX_COST);
    }
    assert_eq!(
        zcard(c, big),
        SLIDE_MAX_LIMIT - REPEATS as u64 * SLIDE_MAX_COST
    );
    let line = words(&format!(
        "RL.SLIDE {big} {SLIDE_MAX_LIMIT} {SLIDE_LIVE_WINDOW} COST {SLIDE_MAX_COST}"
    ));
    case(
        out,
        "RL.SLIDE",
        format!(
            "admit COST {SLIDE_MAX_COST} into a key holding {} to {} live entries (limit 10^6)",
            SLIDE_MAX_LIMIT - REPEATS as u64 * SLIDE_MAX_COST,
            SLIDE_MAX_LIMIT - SLIDE_MAX_COST
        ),
        c,
        none,
        &line,
        &mut allowed(1, "the last admissions"),
    );
    assert_eq!(zcard(c, big), SLIDE_MAX_LIMIT);
    case(
        out,
        "RL.SLIDE",
        format!("denied COST {SLIDE_MAX_COST} on a full key of 10^6 live entries (retry: the {SLIDE_MAX_COST}th entry, by rank)"),
        c,
        none,
        &line,
        &mut allowed(0, "full key"),
    );
    let lowered = words(&format!("RL.SLIDE {big} 1 {SLIDE_LIVE_WINDOW}"));
    case(
        out,
        "RL.SLIDE",
        "denied, limit lowered to 1 on 10^6 live entries (retry: the 10^6th entry, by rank)".into(),
        c,
        none,
        &lowered,
        &mut allowed(0, "lowered limit"),
    );
    let mut peek = lowered.clone();
    peek.splice(0..1, words("RL.PEEK SLIDE"));
    case(
        out,
        "RL.PEEK",
        "SLIDE, limit 1 on 10^6 live entries".into(),
        c,
        none,
        &peek,
        &mut allowed(0, "peek lowered limit"),
    );
    let live_all = all_line(&others, |_| format!("SLIDE 1 {SLIDE_LIVE_WINDOW}"));
    case(
        out,
        "RL.ALL",
        "8 SLIDE clauses, each limit 1 on a full key (10^6 + 7 x 20,000 entries), all denied"
            .into(),
        c,
        none,
        &live_all,
        &mut allowed(0, "RL.ALL slide denied"),
    );

    // ---- RL.SLIDE: the same entries, all left a 1 s window. ----
    let filled = server_ms(c);
    std::thread::sleep(Duration::from_millis(SLIDE_STALE_WINDOW + 50));
    while server_ms(c) <= filled + SLIDE_STALE_WINDOW as i64 {
        std::thread::sleep(Duration::from_millis(10));
    }
    let peek = words(&format!(
        "RL.PEEK SLIDE {big} {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {SLIDE_MAX_COST}"
    ));
    case(
        out,
        "RL.PEEK",
        format!("SLIDE COST {SLIDE_MAX_COST} on 10^6 entries that all left the window"),
        c,
        none,
        &peek,
        &mut allowed(1, "peek stale"),
    );
    for cost in [1, SLIDE_MAX_COST] {
        let line = words(&format!(
            "RL.SLIDE {big} {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {cost}"
        ));
        let mut before = zcard(c, big);
        let removes = SLIDE_EVICT;
        case(
            out,
            "RL.SLIDE",
            format!(
                "admit COST {cost} on ~10^6 entries that all left the window (removes {removes})"
            ),
            c,
            none,
            &line,
            &mut |c, r| {
                assert_eq!(int(&items(r)[0]), 1, "stale admission: {r:?}");
                let now = zcard(c, big);
                assert_eq!(before + cost - now, removes, "stale entries removed");
                before = now;
            },
        );
    }
    // A denial behind the backlog: the walk over the oldest, ZCOUNT, and
    // the retry by rank among the entries just admitted.
    let behind = words(&format!("RL.SLIDE {big} 1 {SLIDE_STALE_WINDOW}"));
    case(
        out,
        "RL.SLIDE",
        format!(
            "denied, limit 1, behind ~10^6 stale entries ({} live: walk, ZCOUNT, rank)",
            REPEATS as u64 * (1 + SLIDE_MAX_COST)
        ),
        c,
        none,
        &behind,
        &mut allowed(0, "denial behind the backlog"),
    );
    // One clause takes all the cost the SLIDE clauses may share (100 in
    // all) but for the 7 others' 1 each: each clause may remove its cost + 1
    // and an equal part of what the call's 128 leaves ((128 - 108) / 8 = 2):
    // 96 + 7 x 4 = 124 removals, 100 entries.
    let stale_all = all_line(&others, |i| {
        let cost = if i == 0 {
            SLIDE_MAX_COST - (CLAUSES as u64 - 1)
        } else {
            1
        };
        format!("SLIDE {SLIDE_MAX_LIMIT} {SLIDE_STALE_WINDOW} COST {cost}")
    });
    let total = |c: &mut Connection| others.iter().map(|k| zcard(c, k)).sum::<u64>();
    let mut before = total(c);
    case(
        out,
        "RL.ALL",
        "8 SLIDE clauses (COST 93 + 7 x 1) on stale backlogs (10^6, 7 x 20,000): 124 removals"
            .into(),
        c,
        none,
        &stale_all,
        &mut |c, r| {
            assert_eq!(int(&items(r)[0]), 1, "RL.ALL stale slide: {r:?}");
            let now = total(c);
            let spare = (SLIDE_EVICT - SLIDE_MAX_COST - CLAUSES as u64) / CLAUSES as u64;
            let removals = SLIDE_MAX_COST + CLAUSES as u64 * (1 + spare);
            assert_eq!(
                before + SLIDE_MAX_COST - now,
                removals,
                "RL.ALL stale entries removed"
            );
            before = now;
        },
    );
}
