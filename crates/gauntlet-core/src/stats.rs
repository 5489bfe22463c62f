//! Statistics for comparing runs and for calibrating judges: the exact McNemar test on
//! paired pass/fail outcomes ([`mcnemar_exact`]), Wilson score intervals on pass rates
//! ([`wilson`]), the paired sample size for a McNemar comparison ([`mcnemar_sample_size`],
//! Connor 1987), and agreement between a judge and human labels: Cohen's kappa, plain or
//! weighted ([`kappa`]), with a seeded percentile bootstrap interval ([`bootstrap_kappa`]);
//! the same bootstrap of a plain mean ([`bootstrap_mean`]), for per-suite figures averaged
//! over cases.
//!
//! A/B runs on the same suite are paired (the same cases under two conditions), so they are
//! compared on their discordant pairs, not as two independent samples.

/// The two-sided exact McNemar p-value for `b` pairs that passed only under A and `c` that
/// passed only under B: twice the binomial tail of the smaller count at probability 1/2,
/// capped at 1. With no discordant pair the p-value is 1.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // Sum C(n, i) / 2^n for i in 0..=k, in log space so large n neither overflows nor
    // underflows term by term.
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_c - ln2n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// The Wilson score interval for `x` successes in `n` trials at confidence `1 - alpha`.
/// Returns (low, high); with `n = 0`, (0, 1).
pub fn wilson(x: u64, n: u64, alpha: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = normal_quantile(1.0 - alpha / 2.0);
    let n = n as f64;
    let p = x as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The number of pairs a two-sided McNemar test needs to detect discordant proportions
/// `p01` (pass under A only) and `p10` (pass under B only) at level `alpha` with the given
/// `power` (Connor 1987, normal approximation). `None` when `p01 == p10` (nothing to
/// detect) or the inputs are out of range.
pub fn mcnemar_sample_size(p01: f64, p10: f64, alpha: f64, power: f64) -> Option<u64> {
    let valid = |x: f64| (0.0..=1.0).contains(&x);
    if !valid(p01)
        || !valid(p10)
        || p01 + p10 > 1.0
        || !(0.0..1.0).contains(&alpha)
        || !(0.0..1.0).contains(&power)
    {
        return None;
    }
    let delta = p10 - p01;
    if delta == 0.0 {
        return None;
    }
    let psi = p01 + p10;
    let za = normal_quantile(1.0 - alpha / 2.0);
    let zb = normal_quantile(power);
    let n = ((za * psi.sqrt() + zb * (psi - delta * delta).sqrt()) / delta).powi(2);
    Some(n.ceil() as u64)
}

/// The standard normal quantile (inverse CDF), Wichura's algorithm AS 241 (PPND16), accurate
/// to about 1e-16.
// The coefficients are copied as published, digits beyond f64's precision included, so
// they can be checked against the paper.
#[allow(clippy::excessive_precision)]
pub fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q
            * (((((((2509.0809287301226727 * r + 33430.575583588128105) * r
                + 67265.770927008700853)
                * r
                + 45921.953931549871457)
                * r
                + 13731.693765509461125)
                * r
                + 1971.5909503065514427)
                * r
                + 133.14166789178437745)
                * r
                + 3.387132872796366608)
            / (((((((5226.495278852545925 * r + 28729.085735721942674) * r
                + 39307.89580009271061)
                * r
                + 21213.794301586595867)
                * r
                + 5394.1960214247511077)
                * r
                + 687.1870074920579083)
                * r
                + 42.313330701600911252)
                * r
                + 1.0);
    }
    let mut r = if q < 0.0 { p } else { 1.0 - p };
    r = (-r.ln()).sqrt();
    let val = if r <= 5.0 {
        let r = r - 1.6;
        (((((((7.7454501427834140764e-4 * r + 0.0227238449892691845833) * r
            + 0.24178072517745061177)
            * r
            + 1.27045825245236838258)
            * r
            + 3.64784832476320460504)
            * r
            + 5.7694972214606914055)
            * r
            + 4.6303378461565452959)
            * r
            + 1.42343711074968357734)
            / (((((((1.05075007164441684324e-9 * r + 5.475938084995344946e-4) * r
                + 0.0151986665636164571966)
                * r
                + 0.14810397642748007459)
                * r
                + 0.68976733498510000455)
                * r
                + 1.6763848301838038494)
                * r
                + 2.05319162663775882187)
                * r
                + 1.0)
    } else {
        let r = r - 5.0;
        (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r
            + 0.0012426609473880784386)
            * r
            + 0.026532189526576123093)
            * r
            + 0.29656057182850489123)
            * r
            + 1.7848265399172913358)
            * r
            + 5.4637849111641143699)
            * r
            + 6.6579046435011037772)
            / (((((((2.04426310338993978564e-15 * r + 1.4215117583164458887e-7) * r
                + 1.8463183175100546818e-5)
                * r
                + 7.868691311456132591e-4)
                * r
                + 0.0148753612908506148525)
                * r
                + 0.13692988092273580531)
                * r
                + 0.59983220655588793769)
                * r
                + 1.0)
    };
    if q < 0.0 { -val } else { val }
}

/// How a disagreement between two categories counts in a [`kappa`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KappaWeights {
    /// Every disagreement counts fully (Cohen's kappa): for categories with no order, such as
    /// pass and fail.
    Unweighted,
    /// A disagreement of `d` steps on a `k`-point scale keeps `1 - d²/(k-1)²` of an agreement
    /// (quadratic weighted kappa): on a 0-3 scale, judging 2 where people said 3 is a small
    /// miss and 0 where they said 3 a large one.
    Quadratic,
}

/// The `k`×`k` table of counts of `(first, second)` pairs: rows are the first rater (the
/// judge), columns the second (the people). Pairs outside `0..k` are ignored.
pub fn confusion(pairs: &[(usize, usize)], k: usize) -> Vec<Vec<u64>> {
    let mut table = vec![vec![0u64; k]; k];
    for &(a, b) in pairs {
        if a < k && b < k {
            table[a][b] += 1;
        }
    }
    table
}

/// The agreement weight of cell `(i, j)` of a `k`-category table.
fn weight(weights: KappaWeights, i: usize, j: usize, k: usize) -> f64 {
    if i == j {
        return 1.0;
    }
    match weights {
        KappaWeights::Unweighted => 0.0,
        KappaWeights::Quadratic if k > 1 => {
            let d = i.abs_diff(j) as f64;
            let span = (k - 1) as f64;
            1.0 - (d * d) / (span * span)
        }
        KappaWeights::Quadratic => 0.0,
    }
}

/// Cohen's kappa of a square confusion matrix, plain or weighted:
/// `(p_o - p_e) / (1 - p_e)`, with the observed agreement `p_o = Σ w_ij p_ij` and the
/// agreement expected by chance from the two raters' margins `p_e = Σ w_ij p_i· p_·j`.
///
/// `None` for an empty table, and when `p_e` is 1: both raters put every item in the same
/// category, so chance explains all the agreement and kappa is undefined.
pub fn kappa(table: &[Vec<u64>], weights: KappaWeights) -> Option<f64> {
    let k = table.len();
    let n: u64 = table.iter().flatten().sum();
    if n == 0 || table.iter().any(|r| r.len() != k) {
        return None;
    }
    let n = n as f64;
    let rows: Vec<f64> = table
        .iter()
        .map(|r| r.iter().sum::<u64>() as f64 / n)
        .collect();
    let cols: Vec<f64> = (0..k)
        .map(|j| table.iter().map(|r| r[j]).sum::<u64>() as f64 / n)
        .collect();
    let (mut po, mut pe) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            let w = weight(weights, i, j, k);
            po += w * table[i][j] as f64 / n;
            pe += w * rows[i] * cols[j];
        }
    }
    // Rounding can leave 1 - pe a hair above zero when it is mathematically zero.
    if 1.0 - pe <= 1e-12 {
        return None;
    }
    Some((po - pe) / (1.0 - pe))
}

/// A percentile bootstrap interval of kappa.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapInterval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Resamples drawn.
    pub resamples: u32,
    /// Resamples whose kappa was undefined (every item in one category), left out of the
    /// percentiles.
    pub undefined: u32,
}

/// The percentile bootstrap interval at `level` (0.95 for 95%) of the kappa of `(judge,
/// human)` pairs over `k` categories: `resamples` resamples of the items with replacement,
/// drawn with a [`SplitMix64`] seeded with `seed`, so the same inputs always give the same
/// interval. The bounds are the `(1 - level)/2` and `(1 + level)/2` quantiles of the
/// resampled kappas, linearly interpolated between order statistics. `None` when no
/// resample has a defined kappa.
pub fn bootstrap_kappa(
    pairs: &[(usize, usize)],
    k: usize,
    weights: KappaWeights,
    resamples: u32,
    seed: u64,
    level: f64,
) -> Option<BootstrapInterval> {
    if pairs.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut values = Vec::with_capacity(resamples as usize);
    let mut undefined = 0;
    let mut table = vec![vec![0u64; k]; k];
    for _ in 0..resamples {
        for row in &mut table {
            row.fill(0);
        }
        for _ in 0..pairs.len() {
            let (a, b) = pairs[rng.below(pairs.len())];
            if a < k && b < k {
                table[a][b] += 1;
            }
        }
        match kappa(&table, weights) {
            Some(v) => values.push(v),
            None => undefined += 1,
        }
    }
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(BootstrapInterval {
        low: quantile(&values, tail),
        high: quantile(&values, 1.0 - tail),
        resamples,
        undefined,
    })
}

/// The percentile bootstrap interval at `level` of the mean of `values`: `resamples`
/// resamples of the values with replacement, drawn with a [`SplitMix64`] seeded with `seed`,
/// bounds interpolated as in [`bootstrap_kappa`]. The values are the units resampled (one
/// per case, say), so the interval speaks of those units, not of the trials inside them.
/// `None` for no values or no resamples.
pub fn bootstrap_mean(
    values: &[f64],
    resamples: u32,
    seed: u64,
    level: f64,
) -> Option<BootstrapInterval> {
    if values.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let n = values.len();
    let mut means = Vec::with_capacity(resamples as usize);
    for _ in 0..resamples {
        let sum: f64 = (0..n).map(|_| values[rng.below(n)]).sum();
        means.push(sum / n as f64);
    }
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(BootstrapInterval {
        low: quantile(&means, tail),
        high: quantile(&means, 1.0 - tail),
        resamples,
        undefined: 0,
    })
}

/// The median of `values`, in any order: the 0.5 [`quantile`], the mean of the
/// two middle values for an even count. `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    Some(quantile(&v, 0.5))
}

/// The `q` quantile of sorted values, interpolated linearly between order statistics
/// (Hyndman and Fan's type 7, the default of R and NumPy).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny seeded generator written out here, not
/// taken from a crate, because a calibration record's interval must come out the same from
/// the same seed in every future version of gauntlet, and a crate may change its stream.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0), by multiply-and-shift; its bias is below `n / 2^64`.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_value_or_the_mean_of_the_middle_two() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[0.7]), Some(0.7));
        assert_eq!(median(&[0.9, 0.1, 0.5]), Some(0.5));
        assert_eq!(median(&[1.0, 0.0, 0.5, 0.25]), Some(0.375));
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn the_bootstrap_of_a_mean_is_seeded_and_brackets_the_mean() {
        let v = [0.0, 0.0, 0.25, 0.5, 1.0, 0.0, 0.75, 0.0];
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let a = bootstrap_mean(&v, 2000, 7, 0.95).unwrap();
        let b = bootstrap_mean(&v, 2000, 7, 0.95).unwrap();
        assert_eq!(a, b, "the same seed gives the same interval");
        assert!(a.low < mean && mean < a.high, "{a:?} around {mean}");
        assert!(a.low >= 0.0 && a.high <= 1.0);
        let c = bootstrap_mean(&v, 2000, 8, 0.95).unwrap();
        assert_ne!(a, c, "another seed draws other resamples");
        // Values that do not vary have a zero-width interval.
        let flat = bootstrap_mean(&[0.5; 5], 500, 1, 0.95).unwrap();
        assert_eq!((flat.low, flat.high), (0.5, 0.5));
        assert!(bootstrap_mean(&[], 500, 1, 0.95).is_none());
        assert!(bootstrap_mean(&v, 0, 1, 0.95).is_none());
    }

    #[test]
    fn mcnemar_matches_fagerland_et_al_2013() {
        // Fagerland, Lydersen & Laake (2013), "The McNemar test for binary matched-pairs data:
        // mid-p and asymptotic are better than exact conditional", BMC Medical Research
        // Methodology 13:91, worked example: 1 and 7 discordant pairs, exact conditional
        // p = 0.0703 (= 2 x 9/256).
        assert!(close(mcnemar_exact(1, 7), 18.0 / 256.0, 1e-12));
        assert!(close(mcnemar_exact(7, 1), 18.0 / 256.0, 1e-12));
    }

    #[test]
    fn mcnemar_edges() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(3, 3), 1.0, "a symmetric table is capped at 1");
        // 0 vs 10: 2 / 2^10.
        assert!(close(mcnemar_exact(0, 10), 2.0 / 1024.0, 1e-15));
        // Large counts stay finite and tiny.
        let p = mcnemar_exact(100, 1000);
        assert!(p > 0.0 && p < 1e-100);
    }

    #[test]
    fn wilson_matches_newcombe_1998() {
        // Newcombe (1998), "Two-sided confidence intervals for the single proportion:
        // comparison of seven methods", Statistics in Medicine 17:857-872, Table I, method 3
        // (Wilson score without continuity correction), 95% intervals.
        let cases = [
            ((81, 263), (0.2553, 0.3662)),
            ((15, 148), (0.0624, 0.1605)),
            ((0, 20), (0.0, 0.1611)),
            ((1, 29), (0.0061, 0.1718)),
        ];
        for ((x, n), (lo, hi)) in cases {
            let (l, h) = wilson(x, n, 0.05);
            assert!(
                close(l, lo, 5e-5) && close(h, hi, 5e-5),
                "{x}/{n}: got ({l:.4}, {h:.4})"
            );
        }
    }

    #[test]
    fn normal_quantile_known_values() {
        assert!(close(normal_quantile(0.975), 1.959963984540054, 1e-12));
        assert!(close(normal_quantile(0.8), 0.8416212335729143, 1e-12));
        assert!(close(normal_quantile(0.5), 0.0, 1e-15));
        assert!(close(normal_quantile(1e-10), -6.361340902404056, 1e-9));
    }

    #[test]
    fn sample_size_matches_connor_1987() {
        // Connor (1987), "Sample size for testing differences in proportions for the
        // paired-sample design", Biometrics 43:207-211, p. 209 formula; the worked example
        // published with it by powerandsamplesize.com (McNemar Z-test, 2-sided):
        // p01 = 0.45, p10 = 0.05, alpha = 0.05, power = 0.80 -> 23 pairs.
        assert_eq!(mcnemar_sample_size(0.45, 0.05, 0.05, 0.80), Some(23));
        // A discordance of 0.45 with an odds ratio of 2 (p10 = 0.30, p01 = 0.15) -> 155 pairs
        // (the same formula's published calculator example).
        assert_eq!(mcnemar_sample_size(0.15, 0.30, 0.05, 0.80), Some(155));
        assert_eq!(mcnemar_sample_size(0.1, 0.1, 0.05, 0.8), None);
        assert_eq!(mcnemar_sample_size(0.7, 0.5, 0.05, 0.8), None);
    }
    #[test]
    fn kappa_matches_the_textbook_two_by_two() {
        // 50 items, two raters: 20 both yes, 15 both no, 5 and 10 split. p_o = 0.7,
        // p_e = 0.5 x 0.6 + 0.5 x 0.4 = 0.5, kappa = 0.4.
        let t = vec![vec![20, 5], vec![10, 15]];
        assert!(close(
            kappa(&t, KappaWeights::Unweighted).unwrap(),
            0.4,
            1e-12
        ));
        // The closed form for two categories, 2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d)), is an
        // independent route to the same number.
        let (a, b, c, d) = (20.0, 5.0, 10.0, 15.0);
        let closed = 2.0 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d));
        assert!(close(
            kappa(&t, KappaWeights::Unweighted).unwrap(),
            closed,
            1e-12
        ));
        // Quadratic weights change nothing with two categories.
        assert!(close(
            kappa(&t, KappaWeights::Quadratic).unwrap(),
            0.4,
            1e-12
        ));
    }

    #[test]
    fn weighted_kappa_matches_the_disagreement_form() {
        // Quadratic weighted kappa is also 1 - Σ v_ij o_ij / Σ v_ij e_ij with disagreement
        // weights v_ij = (i - j)² and expected counts e_ij = row_i col_j / n.
        let t: Vec<Vec<u64>> = vec![
            vec![11, 3, 1, 0],
            vec![2, 9, 4, 1],
            vec![0, 3, 10, 2],
            vec![1, 0, 2, 12],
        ];
        let n: f64 = t.iter().flatten().sum::<u64>() as f64;
        let rows: Vec<f64> = t.iter().map(|r| r.iter().sum::<u64>() as f64).collect();
        let cols: Vec<f64> = (0..4)
            .map(|j| t.iter().map(|r| r[j]).sum::<u64>() as f64)
            .collect();
        let (mut num, mut den) = (0.0, 0.0);
        for i in 0..4 {
            for j in 0..4 {
                let v = (i as f64 - j as f64).powi(2);
                num += v * t[i][j] as f64;
                den += v * rows[i] * cols[j] / n;
            }
        }
        let want = 1.0 - num / den;
        let got = kappa(&t, KappaWeights::Quadratic).unwrap();
        assert!(close(got, want, 1e-12), "{got} vs {want}");
        assert!(got > kappa(&t, KappaWeights::Unweighted).unwrap());
    }

    #[test]
    fn kappa_edges() {
        assert_eq!(kappa(&[], KappaWeights::Unweighted), None);
        assert_eq!(
            kappa(&[vec![0, 0], vec![0, 0]], KappaWeights::Unweighted),
            None
        );
        // Everything in one category on both sides: chance explains it all.
        assert_eq!(
            kappa(&[vec![9, 0], vec![0, 0]], KappaWeights::Unweighted),
            None
        );
        // Perfect agreement over two categories, and perfect disagreement.
        assert_eq!(
            kappa(&[vec![5, 0], vec![0, 5]], KappaWeights::Unweighted),
            Some(1.0)
        );
        assert_eq!(
            kappa(&[vec![0, 5], vec![5, 0]], KappaWeights::Unweighted),
            Some(-1.0)
        );
        // A judge that always says the majority class agrees often and scores 0.
        let t = vec![vec![0, 0], vec![10, 90]];
        assert_eq!(kappa(&t, KappaWeights::Unweighted), Some(0.0));
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_estimate() {
        let mut pairs = Vec::new();
        for (a, b, n) in [(0, 0, 40), (0, 1, 8), (1, 0, 12), (1, 1, 40)] {
            pairs.extend(std::iter::repeat_n((a, b), n));
        }
        let k = kappa(&confusion(&pairs, 2), KappaWeights::Unweighted).unwrap();
        let a = bootstrap_kappa(&pairs, 2, KappaWeights::Unweighted, 2000, 7, 0.95).unwrap();
        let b = bootstrap_kappa(&pairs, 2, KappaWeights::Unweighted, 2000, 7, 0.95).unwrap();
        assert_eq!(a, b, "the same seed gives the same interval");
        let c = bootstrap_kappa(&pairs, 2, KappaWeights::Unweighted, 2000, 8, 0.95).unwrap();
        assert_ne!(a, c, "another seed draws other resamples");
        assert!(a.low < k && k < a.high, "{a:?} around {k}");
        // The large-sample standard error of kappa (Fleiss, Cohen and Everitt 1969, under the
        // simplification p_o(1 - p_o) / (n (1 - p_e)²)) puts the 95% half-width near 1.96 SE;
        // the bootstrap should land close to it at n = 100.
        let (po, pe): (f64, f64) = (0.8, 0.48 * 0.52 + 0.52 * 0.48);
        let se = (po * (1.0 - po) / (100.0 * (1.0 - pe) * (1.0 - pe))).sqrt();
        let half = (a.high - a.low) / 2.0;
        assert!(
            (half - 1.96 * se).abs() < 0.04,
            "half-width {half} vs {}",
            1.96 * se
        );
    }

    #[test]
    fn splitmix_matches_its_reference_stream() {
        // The first outputs for seed 1234567, as published with the reference implementation.
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        let mut r = SplitMix64::new(0);
        assert!((0..1000).all(|_| r.below(3) < 3));
    }
}
