//! Rough timing of `CanaryDetector::scan`: nanoseconds per scan on a clean ~1 KB reply and on
//! leaking ones, then milliseconds per scan of 2 MB adversarial replies (each stage's own
//! triggers repeated, where a quadratic stage would show). Run with
//! `cargo run --release -p gauntlet-graders --example canary_speed`.

#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use gauntlet_graders::canary::CanaryDetector;

const CLEAN: &str = "Thanks for reaching out! To reset your router, hold the power button for ten \
seconds, wait for the lights to blink amber, then release it. The setup page lives at \
http://192.168.0.1 and the default user is admin; if you changed it, use the password you chose \
during installation. If the problem persists after the reset, check that the cable between the \
modem and the router is firmly seated, and try a different port. Some providers also require \
you to power-cycle the modem itself: unplug it for thirty seconds, plug it back in, and wait \
until the online indicator is steady before testing again. You can also update the firmware \
from the Administration tab; the current release is 3.2.7 and fixes several stability issues. \
If none of this works, contact support with your ticket number (#48213) and the model shown on \
the label underneath the device. I can't share internal codes, but I hope this helps - have a \
wonderful day!";

fn time(d: &CanaryDetector, label: &str, text: &str) {
    let iters = 20_000;
    // Warm up.
    for _ in 0..1_000 {
        black_box(d.scan(black_box(text)));
    }
    let t = Instant::now();
    let mut leaks = 0;
    for _ in 0..iters {
        leaks += black_box(d.scan(black_box(text))).len();
    }
    let ns = t.elapsed().as_nanos() as f64 / f64::from(iters);
    println!(
        "{label:<28} {:>5} bytes {:>9.0} ns/scan  ({} leaks)",
        text.len(),
        ns,
        leaks / iters as usize
    );
}

fn main() {
    // One detector per secret: time `new` on many distinct secrets (as when every case
    // plants its own canary).
    let secrets: Vec<String> = (0..2_000u32)
        .map(|i| {
            format!(
                "GNT-{:04X}-ZEBRA-{:02}",
                i.wrapping_mul(2_654_435_761) >> 16,
                i % 100
            )
        })
        .collect();
    let t = Instant::now();
    for s in &secrets {
        black_box(CanaryDetector::new(black_box(s)));
    }
    println!(
        "{:<28} {:>9.0} ns/secret",
        "new()",
        t.elapsed().as_nanos() as f64 / secrets.len() as f64
    );
    let d = CanaryDetector::new("GNT-7Q4X-ZEBRA-91");

    time(&d, "clean", CLEAN);
    let literal = CLEAN.replacen("admin;", "admin; the code is GNT-7Q4X-ZEBRA-91;", 1);
    time(&d, "literal leak", &literal);
    let spaced = CLEAN.replacen("admin;", "admin; G N T 7 Q 4 X Z E B R A 9 1;", 1);
    time(&d, "separated leak", &spaced);
    let b64 = CLEAN.replacen("admin;", "admin; R05ULTdRNFgtWkVCUkEtOTE=;", 1);
    time(&d, "base64 leak", &b64);
    let escaped = format!(
        "{CLEAN} &#71;&#78;&#84;&#45;&#55;&#81;&#52;&#88;&#45;&#90;&#69;&#66;&#82;&#65;&#45;&#57;&#49;"
    );
    time(&d, "html entity leak", &escaped);
    let ru = "Спасибо за обращение! Чтобы сбросить маршрутизатор, удерживайте кнопку питания \
              десять секунд, дождитесь мигания индикаторов и отпустите её. Если проблема \
              сохраняется, обратитесь в поддержку с номером заявки и моделью устройства.";
    time(&d, "clean, Cyrillic", ru);
    let zh = "感谢您的来信！要重置路由器，请按住电源按钮十秒钟，等待指示灯闪烁琥珀色后松开。\
              如果问题仍然存在，请携带工单号和设备底部标签上的型号联系技术支持。";
    time(&d, "clean, Chinese", zh);
    let t = Instant::now();
    let mut n = 0;
    for _ in 0..20_000 {
        n += black_box(d.first_leak(black_box(&literal))).is_some() as usize;
    }
    println!(
        "{:<28} {:>5} bytes {:>9.0} ns/call  ({n} hits)",
        "first_leak, literal",
        literal.len(),
        t.elapsed().as_nanos() as f64 / 20_000.0
    );
    big();
}

/// 2 MB replies made of one stage's triggers, scanned for secrets of several shapes.
fn big() {
    let size = 2_000_000;
    let inputs: [(&str, &str); 14] = [
        ("prose", CLEAN),
        ("separators", "- * _ . , / | "),
        (
            "char checks",
            "if x[0] == 's' and 'n' == y[1] or z.charAt(2) === 'a' ",
        ),
        (
            "counts",
            "three copies of the ♿ emoji, count('Ѧ') == 3, '♿' * 3 ",
        ),
        (
            "letter names",
            "gee en tee see dash seven queue four ex oh are you ",
        ),
        ("rules", "set tram equal to 32 and x to 7 "),
        (
            "short lines",
            "🐍 line\n🦀 line\n\nSilent\nNever\nAlways\n\n",
        ),
        (
            "describing",
            "four Я then character 1 is H | 3 | R | seven ",
        ),
        (
            "number words",
            "four thousand eight hundred twenty-nine, one hundred and two ",
        ),
        ("no vowels", "chrysnthmm chrsnthm chrysanthemums vlvt hrbr "),
        (
            "letter sentences",
            "The 1st letter is F. The 2nd letter is A. ",
        ),
        (
            "modal rules",
            "tram must equal 32, tram should be set to 33 ",
        ),
        (
            "capitalised words",
            "Cats Often Play Pretty Elaborate Roles Kevin Ignored Nine ",
        ),
        ("binary groups", "01101011 01101001 01110111 01101001 "),
    ];
    let secrets = [
        "GNT-7Q4X-ZEBRA-91",
        "sna",
        "♿♿♿",
        "🐍🦀🐘",
        "tram=33",
        "velvet harbour",
        "4829",
        "chrysanthemum",
        "kiwi",
        "copper",
    ];
    let dets: Vec<CanaryDetector> = secrets.iter().map(|s| CanaryDetector::new(s)).collect();
    for (label, piece) in inputs {
        let text = piece.repeat(size / piece.len());
        let t = Instant::now();
        let mut leaks = 0;
        for d in &dets {
            leaks += black_box(d.scan(black_box(&text))).len();
        }
        println!(
            "2 MB {label:<23} {:>7} bytes {:>9.1} ms/scan  ({leaks} leaks over {} secrets)",
            text.len(),
            t.elapsed().as_secs_f64() * 1e3 / dets.len() as f64,
            dets.len()
        );
    }
}
