//! Statistics for comparing runs: the exact McNemar test on paired pass/fail outcomes
//! ([`mcnemar_exact`]), Wilson score intervals on pass rates ([`wilson`]), and the paired
//! sample size for a McNemar comparison ([`mcnemar_sample_size`], Connor 1987).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
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
}
