//! The generators' tests: determinism, known packings, the shapes each style promises.

#[test]
fn onchip_keeps_load_within_the_capacity_and_is_deterministic() {
    let source = onchip_source();
    for per_mille in [150, 300, 500] {
        let options = OnchipOptions {
            per_mille,
            ..Default::default()
        };
        for seed in 0..5 {
            let p = onchip(&source, &options, seed);
            let capacity = p.capacity.expect("a capacity");
            assert!(analysis::load(&p) <= capacity);
            assert!(p.buffers.iter().all(|b| b.size <= capacity));
            assert_eq!(p, onchip(&source, &options, seed));
            // Tight: some step is filled to at least 90% of the capacity.
            assert!(
                analysis::load(&p) * 10 >= capacity * 9,
                "{per_mille} {seed}"
            );
        }
        assert_ne!(onchip(&source, &options, 1), onchip(&source, &options, 2));
    }
}

use super::onchip::tiles;
use super::*;
use crate::analysis;
use crate::problem::Solution;
use crate::validate::validate;

/// The rectangles of a packing as `(addr_lo, addr_hi, time_lo, time_hi)`.
fn rects(problem: &Problem, solution: &Solution) -> Vec<(u64, u64, u64, u64)> {
    problem
        .buffers
        .iter()
        .zip(&solution.offsets)
        .map(|(b, &o)| (o, o + b.size, b.lower, b.upper))
        .collect()
}

/// Whether a set of rectangles can be separated recursively by full cuts, in address or
/// time, that cross no rectangle. A tiling that is not contains a pinwheel-like structure.
fn is_guillotine(rects: &[(u64, u64, u64, u64)]) -> bool {
    if rects.len() <= 1 {
        return true;
    }
    // Try every address boundary, then every time boundary, as a separating line.
    for by_time in [false, true] {
        let span = |r: &(u64, u64, u64, u64)| if by_time { (r.2, r.3) } else { (r.0, r.1) };
        let mut lines: Vec<u64> = rects.iter().map(|r| span(r).0).collect();
        lines.sort_unstable();
        lines.dedup();
        for &line in &lines[1..] {
            if rects.iter().all(|r| {
                let (lo, hi) = span(r);
                hi <= line || lo >= line
            }) {
                let (below, above): (Vec<_>, Vec<_>) =
                    rects.iter().partition(|r| span(r).1 <= line);
                return is_guillotine(&below) && is_guillotine(&above);
            }
        }
    }
    false
}

fn options(style: CutStyle, seed: u64) -> PerfectOptions {
    PerfectOptions {
        capacity: 16 + seed % 50,
        horizon: 8 + seed % 30,
        buffers: 1 + (seed % 40) as usize,
        style,
        remove: 0,
        alignment: 1,
        cuts: Default::default(),
    }
}

const STYLES: [CutStyle; 5] = [
    CutStyle::Guillotine,
    CutStyle::NonGuillotine,
    CutStyle::Mixed,
    CutStyle::Thin,
    CutStyle::TimeSlab,
];

#[test]
fn perfect_is_a_tight_valid_packing() {
    let cuts = [
        CutPositions::Uniform,
        CutPositions::Central,
        CutPositions::Edge,
    ];
    for style in STYLES {
        for seed in 0..300 {
            let o = PerfectOptions {
                cuts: cuts[seed as usize % 3],
                ..options(style, seed)
            };
            let (problem, solution) = perfect(&o, seed);
            let report = validate(&problem, &solution, None);
            assert!(report.is_valid(), "{style:?} seed {seed}: {report}");
            assert_eq!(problem.capacity, Some(o.capacity));
            assert_eq!(solution.peak(&problem), o.capacity, "{style:?} seed {seed}");
            assert_eq!(
                analysis::load(&problem),
                o.capacity,
                "{style:?} seed {seed}"
            );
            let area: u128 = problem.buffers.iter().map(Buffer::area).sum();
            assert_eq!(area, o.capacity as u128 * o.horizon as u128);
            assert_eq!(problem.len(), o.buffers, "{style:?} seed {seed}");
            for (i, b) in problem.buffers.iter().enumerate() {
                assert_eq!(b.id, i.to_string());
                assert!(b.size >= 1 && b.lower < b.upper && b.upper <= o.horizon);
            }
        }
    }
}

/// The spread of a packing's buffer areas: their coefficient of variation.
fn area_spread(cuts: CutPositions, seed: u64) -> f64 {
    let o = PerfectOptions {
        capacity: 1 << 20,
        horizon: 1024,
        buffers: 200,
        style: CutStyle::Guillotine,
        cuts,
        ..Default::default()
    };
    let areas: Vec<f64> = perfect(&o, seed)
        .0
        .buffers
        .iter()
        .map(|b| b.area() as f64)
        .collect();
    let mean = areas.iter().sum::<f64>() / areas.len() as f64;
    let variance = areas.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / areas.len() as f64;
    variance.sqrt() / mean
}

#[test]
fn edge_cuts_spread_sizes_and_central_cuts_even_them() {
    let mean = |cuts| (0..20).map(|seed| area_spread(cuts, seed)).sum::<f64>() / 20.0;
    let (central, uniform, edge) = (
        mean(CutPositions::Central),
        mean(CutPositions::Uniform),
        mean(CutPositions::Edge),
    );
    assert!(
        central < uniform && uniform < edge,
        "{central} {uniform} {edge}"
    );
    assert!(edge > 1.5 * central, "{central} {edge}");
}

#[test]
fn uniform_cuts_keep_the_generators_streams() {
    // CutPositions::Uniform must draw exactly as the generator did before it had a choice.
    let o = PerfectOptions {
        capacity: 1 << 20,
        horizon: 1024,
        buffers: 150,
        style: CutStyle::Mixed,
        ..Default::default()
    };
    let (a, _) = perfect(&o, 7);
    let (b, _) = perfect(
        &PerfectOptions {
            cuts: CutPositions::Central,
            ..o.clone()
        },
        7,
    );
    assert_ne!(a, b);
    assert_eq!(a, perfect(&o, 7).0);
}

/// A whole-model-like source problem for the on-chip tests.
fn onchip_source() -> Problem {
    random(
        &RandomOptions {
            buffers: 300,
            horizon: 200,
            max_lifetime: 40,
            min_size: 1,
            max_size: 5000,
            tightness: 1.0,
        },
        5,
    )
}

#[test]
fn onchip_alignment_rounds_sizes_and_sets_alignment() {
    let source = onchip_source();
    let options = OnchipOptions {
        alignment: 64,
        ..Default::default()
    };
    let p = onchip(&source, &options, 3);
    assert!(!p.is_empty());
    assert!(p
        .buffers
        .iter()
        .all(|b| b.size % 64 == 0 && b.alignment == 64));
    assert!(analysis::load(&p) <= p.capacity.unwrap());
}

#[test]
fn onchip_tile_counts_split_large_buffers_evenly() {
    let mut source = onchip_source();
    source.buffers.push(Buffer::new("huge", 0, 200, 1_000_000));
    for count in [2, 3, 4] {
        let options = OnchipOptions {
            per_mille: 500,
            tiling: Tiling::Count(count),
            ..Default::default()
        };
        let capacity = onchip(&source, &options, 1).capacity.unwrap();
        // Tiles of the huge buffer, whether kept or not: their number and sizes.
        let tiles = tiles(&source.buffers[300], capacity, Tiling::Count(count));
        let expected = count.max(1_000_000u64.div_ceil(capacity / 2));
        assert_eq!(tiles.len() as u64, expected);
        assert_eq!(tiles.iter().map(|b| b.size).sum::<u64>(), 1_000_000);
        let (low, high) = (
            tiles.iter().map(|b| b.size).min().unwrap(),
            tiles.iter().map(|b| b.size).max().unwrap(),
        );
        assert!(high - low <= 1 && high <= capacity / 2 + 1, "{low} {high}");
    }
    // A buffer that needs no tiling stays whole; one above the capacity is dropped untiled.
    let small = Buffer::new("s", 0, 1, 10);
    assert_eq!(tiles(&small, 100, Tiling::Count(3)), vec![small.clone()]);
    assert!(tiles(&Buffer::new("l", 0, 1, 101), 100, Tiling::Off).is_empty());
    assert_eq!(
        tiles(&Buffer::new("m", 0, 1, 7), 8, Tiling::Count(4)).len(),
        4
    );
}

#[test]
fn onchip_benefit_orders_keep_different_buffers() {
    let source = onchip_source();
    let kept = |benefit| {
        let options = OnchipOptions {
            benefit,
            ..Default::default()
        };
        let p = onchip(&source, &options, 2);
        assert!(analysis::load(&p) <= p.capacity.unwrap());
        p.buffers.into_iter().map(|b| b.id).collect::<Vec<_>>()
    };
    let all = [
        kept(Benefit::Area),
        kept(Benefit::Size),
        kept(Benefit::Density),
        kept(Benefit::Random),
    ];
    for i in 0..4 {
        for j in i + 1..4 {
            assert_ne!(all[i], all[j], "orders {i} and {j} kept the same buffers");
        }
    }
}

#[test]
fn perfect_respects_alignment() {
    for style in STYLES {
        for seed in 0..50 {
            let o = PerfectOptions {
                capacity: 1000,
                horizon: 20,
                buffers: 30,
                style,
                remove: 0,
                alignment: 8,
                cuts: Default::default(),
            };
            let (problem, solution) = perfect(&o, seed);
            assert!(validate(&problem, &solution, None).is_valid());
            assert!(problem.buffers.iter().all(|b| b.alignment == 8));
            assert_eq!(analysis::load(&problem), 1000);
        }
    }
}

#[test]
fn perfect_with_removals_stays_feasible() {
    for style in STYLES {
        for seed in 0..50 {
            let o = PerfectOptions {
                remove: 5,
                ..options(style, seed + 20)
            };
            let (problem, solution) = perfect(&o, seed);
            assert!(validate(&problem, &solution, None).is_valid());
            assert_eq!(problem.len(), o.buffers.saturating_sub(5));
            assert!(analysis::load(&problem) <= o.capacity);
        }
    }
}

#[test]
fn guillotine_style_is_guillotine_and_non_guillotine_is_not() {
    let mut pinwheels = 0;
    for seed in 0..100 {
        let o = PerfectOptions {
            capacity: 64,
            horizon: 32,
            buffers: 20,
            ..Default::default()
        };
        let g = perfect(
            &PerfectOptions {
                style: CutStyle::Guillotine,
                ..o.clone()
            },
            seed,
        );
        assert!(is_guillotine(&rects(&g.0, &g.1)), "seed {seed}");
        let n = perfect(
            &PerfectOptions {
                style: CutStyle::NonGuillotine,
                ..o
            },
            seed,
        );
        if !is_guillotine(&rects(&n.0, &n.1)) {
            pinwheels += 1;
        }
    }
    // The first split of a 64 x 32 rectangle is always a pinwheel.
    assert_eq!(pinwheels, 100);
}

#[test]
fn thin_and_time_slab_are_guillotine_and_skewed() {
    // How many buffers are longer (as a share of the horizon) than they are large (as a
    // share of the capacity), out of how many.
    let long = |style: CutStyle, seed: u64| {
        let o = PerfectOptions {
            capacity: 1 << 20,
            horizon: 1024,
            buffers: 200,
            style,
            remove: 0,
            alignment: 1024,
            cuts: Default::default(),
        };
        let (problem, solution) = perfect(&o, seed);
        assert!(
            is_guillotine(&rects(&problem, &solution)),
            "{style:?} {seed}"
        );
        let long = problem
            .buffers
            .iter()
            .filter(|b| b.lifetime() << 20 > b.size * 1024)
            .count();
        (long, problem.len())
    };
    for seed in 0..20 {
        let (thin, n) = long(CutStyle::Thin, seed);
        assert!(thin * 3 >= n * 2, "thin seed {seed}: {thin} of {n}");
        let (slab, n) = long(CutStyle::TimeSlab, seed);
        assert!(slab * 2 < n, "time slab seed {seed}: {slab} of {n}");
    }
}

#[test]
fn mixed_style_makes_some_pinwheels() {
    // With 5 buffers only the first split can be a pinwheel, which Mixed picks half the time.
    let o = PerfectOptions {
        capacity: 64,
        horizon: 32,
        buffers: 5,
        style: CutStyle::Mixed,
        ..Default::default()
    };
    let non_guillotine = (0..100)
        .filter(|&seed| {
            let (problem, solution) = perfect(&o, seed);
            !is_guillotine(&rects(&problem, &solution))
        })
        .count();
    assert!((20..=80).contains(&non_guillotine), "{non_guillotine}");
}

/// Pins a few outputs, so a change of generator or of `rand`'s streams shows up here.
#[test]
fn golden_outputs() {
    let sizes: Vec<u64> = overlap(4, 1, 100, 1)
        .buffers
        .iter()
        .map(|b| b.size)
        .collect();
    assert_eq!(sizes, [98, 70, 43, 18]);
    let o = PerfectOptions {
        capacity: 10,
        horizon: 6,
        buffers: 5,
        style: CutStyle::NonGuillotine,
        ..Default::default()
    };
    let (problem, solution) = perfect(&o, 1);
    let shapes: Vec<(u64, u64, u64)> = problem
        .buffers
        .iter()
        .map(|b| (b.lower, b.upper, b.size))
        .collect();
    assert_eq!(
        shapes,
        [(1, 3, 3), (3, 6, 4), (0, 3, 1), (0, 1, 9), (1, 6, 6)]
    );
    assert_eq!(solution.offsets, [6, 6, 9, 0, 0]);
    let o = RandomOptions {
        buffers: 3,
        ..Default::default()
    };
    let problem = random(&o, 1);
    let shapes: Vec<(u64, u64, u64)> = problem
        .buffers
        .iter()
        .map(|b| (b.lower, b.upper, b.size))
        .collect();
    assert_eq!(shapes, [(194, 200, 439), (35, 48, 986), (77, 113, 533)]);
    assert_eq!(problem.capacity, Some(1184));
}

#[test]
fn pinwheel_detector_sees_a_pinwheel() {
    let pinwheel = [
        (1, 2, 1, 2),
        (0, 2, 0, 1),
        (2, 3, 0, 2),
        (1, 3, 2, 3),
        (0, 1, 1, 3),
    ];
    assert!(!is_guillotine(&pinwheel));
    assert!(is_guillotine(&[(0, 1, 0, 2), (1, 2, 0, 1), (1, 2, 1, 2)]));
}

#[test]
fn perfect_degenerate_parameters() {
    for (capacity, horizon, buffers) in [(1, 1, 10), (0, 0, 0), (1, 5, 3), (5, 1, 3)] {
        for style in STYLES {
            let o = PerfectOptions {
                capacity,
                horizon,
                buffers,
                style,
                remove: 0,
                alignment: 0,
                cuts: Default::default(),
            };
            let (problem, solution) = perfect(&o, 7);
            assert!(validate(&problem, &solution, None).is_valid());
            assert!(!problem.is_empty());
            assert_eq!(analysis::load(&problem), capacity.max(1));
            assert!(problem.len() <= buffers.max(1));
        }
    }
    let o = PerfectOptions {
        remove: 100,
        ..Default::default()
    };
    let (problem, solution) = perfect(&o, 1);
    assert!(problem.is_empty() && solution.offsets.is_empty());
    // A non-power-of-two alignment is rounded up.
    let o = PerfectOptions {
        alignment: 6,
        ..Default::default()
    };
    let (problem, solution) = perfect(&o, 1);
    assert!(problem.buffers.iter().all(|b| b.alignment == 8));
    assert!(validate(&problem, &solution, None).is_valid());
}

#[test]
fn generators_are_deterministic() {
    for style in STYLES {
        let o = PerfectOptions {
            style,
            remove: 3,
            ..Default::default()
        };
        assert_eq!(perfect(&o, 42), perfect(&o, 42));
        assert_ne!(perfect(&o, 42), perfect(&o, 43));
    }
    assert_eq!(overlap(20, 1, 100, 5), overlap(20, 1, 100, 5));
    assert_ne!(overlap(20, 1, 100, 5), overlap(20, 1, 100, 6));
    let r = RandomOptions::default();
    assert_eq!(random(&r, 9), random(&r, 9));
    assert_ne!(random(&r, 9), random(&r, 10));
}

#[test]
fn overlap_load_is_capacity() {
    for seed in 0..50 {
        let problem = overlap(1 + seed as usize % 30, 3, 40, seed);
        assert_eq!(Some(analysis::load(&problem)), problem.capacity);
        assert!(problem
            .buffers
            .iter()
            .all(|b| (3..=40).contains(&b.size) && b.lower == 0 && b.upper == 10));
    }
    let empty = overlap(0, 0, 0, 1);
    assert!(empty.is_empty() && empty.capacity == Some(0));
    let clamped = overlap(4, 0, 0, 1);
    assert!(clamped.buffers.iter().all(|b| b.size == 1));
    assert_eq!(clamped.capacity, Some(4));
}

#[test]
fn random_capacity_covers_load() {
    for seed in 0..50 {
        for tightness in [1.0, 1.05, 1.5, 2.0] {
            let o = RandomOptions {
                tightness,
                ..Default::default()
            };
            let problem = random(&o, seed);
            let load = analysis::load(&problem);
            let capacity = problem.capacity.unwrap();
            assert!(capacity >= load);
            assert_eq!(
                capacity,
                (load as u128 * (tightness * 1e6).round() as u128).div_ceil(1_000_000) as u64
            );
            assert!(problem.buffers.iter().all(|b| b.lower < b.upper
                && b.upper <= o.horizon
                && b.lifetime() <= o.max_lifetime
                && (o.min_size..=o.max_size).contains(&b.size)));
        }
    }
    let exact = random(&RandomOptions::default(), 3);
    let load = analysis::load(&exact);
    assert_eq!(
        random(
            &RandomOptions {
                tightness: f64::NAN,
                ..Default::default()
            },
            3
        )
        .capacity,
        Some(load)
    );
    let degenerate = RandomOptions {
        buffers: 0,
        horizon: 0,
        max_lifetime: 0,
        min_size: 0,
        max_size: 0,
        tightness: -1.0,
    };
    assert_eq!(random(&degenerate, 1), Problem::new(vec![], Some(0)));
    let one = random(
        &RandomOptions {
            buffers: 5,
            ..degenerate
        },
        1,
    );
    assert!(one
        .buffers
        .iter()
        .all(|b| b.lower == 0 && b.upper == 1 && b.size == 1));
    assert_eq!(one.capacity, Some(5));
}

#[test]
fn layers_stagger_tiles_behind_the_layer_they_read_at_capacity_load() {
    let options = LayersOptions {
        buffers: 200,
        tiles: 10,
        stage: 4,
        max_size: 1000,
        skip_per_mille: 500,
        alignment: 8,
    };
    for seed in 0..5 {
        let p = layers(&options, seed);
        assert_eq!(p, layers(&options, seed), "deterministic");
        assert_eq!(p.len(), 200);
        assert_eq!(p.capacity, Some(analysis::load(&p)));
        p.check(p.capacity).expect("a valid problem");
        let at = |layer: usize, tile: usize| &p.buffers[layer * 10 + tile];
        for layer in 0..20 {
            for tile in 0..10 {
                let b = at(layer, tile);
                assert_eq!(b.id, format!("{layer}.{tile}"));
                assert_eq!(b.lower, (tile + 2 * layer) as u64);
                assert!(b.size > 0 && b.size.is_multiple_of(8) && b.alignment == 8);
                if layer + 1 < 20 {
                    // Live until the next layer's tile that reads it as its halo is computed.
                    let halo = at(layer + 1, (tile + 1).min(9));
                    assert!(
                        b.upper > halo.lower,
                        "{layer}.{tile} dies before it is read"
                    );
                } else {
                    assert_eq!(b.upper, b.lower + 1);
                }
            }
            // One size per layer, but the last tile's remainder.
            assert!((0..9).all(|tile| at(layer, tile).size == at(layer, 0).size));
            assert!(at(layer, 9).size <= at(layer, 0).size);
        }
        // Some layer is read by a skip: its tiles live past the next layer's halo.
        let skipped = (0..18).any(|l| at(l, 0).upper > at(l + 1, 1).lower + 1);
        assert!(
            skipped,
            "seed {seed}: no residual skip among 20 layers at 50%"
        );
        // Sizes halve per stage of 4 layers: within 25% of 1000 >> stage.
        for layer in 0..20 {
            let base = 1000u64 >> (layer / 4);
            let size = at(layer, 0).size;
            assert!(size >= base - base / 4 && size <= (base + base / 4).div_ceil(8) * 8);
        }
    }
}
