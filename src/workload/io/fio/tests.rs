//! Tests of the job file reader: each option family, each refusal, hostile files.

use super::*;
use std::time::Duration;

fn no_env(_: &str) -> Option<String> {
    None
}

fn read(text: &str) -> Result<JobFile, JobFileError> {
    read_str(text, Path::new("/t/job.fio"), &no_env)
}

fn job(text: &str) -> FioJob {
    let f = read(text).unwrap_or_else(|e| panic!("{e}"));
    f.jobs.into_iter().next().unwrap()
}

fn refused(text: &str) -> String {
    match read(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn smallest_job() {
    let j = job("[a]\nsize=1m\n");
    assert_eq!(j.name, "a");
    assert_eq!(j.bs, [4096, 4096]);
    assert_eq!(j.rw, FioRw::Read);
    assert_eq!(j.size, Some(SizeSpec::Bytes(1 << 20)));
    let _ = Duration::ZERO;
}

/// A temp dir of job files, removed on drop.
struct Dir(std::path::PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("perflab-fio-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn file(&self, name: &str, text: &str) -> std::path::PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---- syntax ----

#[test]
fn comments_and_blanks_and_spaces() {
    let f = read(
        "; a comment\n# another\n\n[global]\nsize = 4m ; trailing\nbs=8k#cut\n[a]\n  rw = randread  \n",
    )
    .unwrap();
    let j = &f.jobs[0];
    assert_eq!(j.size, Some(SizeSpec::Bytes(4 << 20)));
    assert_eq!(j.bs, [8192, 8192]);
    assert_eq!(j.rw, FioRw::RandRead);
    assert_eq!(
        f.global_options,
        vec![("size".into(), "4m".into()), ("bs".into(), "8k".into())]
    );
    assert_eq!(j.options, vec![("rw".to_string(), "randread".to_string())]);
}

#[test]
fn option_before_any_section_is_refused() {
    let e = read("size=1m\n[a]\n").unwrap_err();
    assert_eq!(e.at.as_ref().unwrap().line, 1);
    assert!(e.to_string().contains("outside any [section]"), "{e}");
}

#[test]
fn globals_affect_only_later_jobs_and_several_are_allowed() {
    let f = read("[global]\nsize=1m\n[a]\n[global]\nbs=8k\n[b]\n[global-more]\nrw=write\n[c]\n")
        .unwrap();
    let bs: Vec<_> = f.jobs.iter().map(|j| j.bs[0]).collect();
    assert_eq!(bs, [4096, 8192, 8192]);
    assert_eq!(f.jobs[2].rw, FioRw::Write);
    assert_eq!(f.jobs[1].rw, FioRw::Read);
    // every global section's own options, as fio's one default job collects them
    assert_eq!(
        f.global_options,
        vec![
            ("size".into(), "1m".into()),
            ("bs".into(), "8k".into()),
            ("rw".into(), "write".into())
        ]
    );
    assert_eq!(options::canonical_name("readwrite"), Some("rw"));
    assert_eq!(
        options::canonical_name("ss_dur"),
        Some("steadystate_duration")
    );
}

#[test]
fn a_job_with_no_options_takes_the_globals() {
    let f = read("[global]\nsize=1m\n[a]\n[b]\n").unwrap();
    assert_eq!(f.jobs.len(), 2);
    assert!(f.jobs[1].options.is_empty());
}

#[test]
fn no_jobs_is_refused() {
    assert!(refused("[global]\nsize=1m\n").contains("no jobs"));
    assert!(refused("").contains("no jobs"));
    assert!(refused("; only a comment\n").contains("no jobs"));
}

#[test]
fn bad_section_headers() {
    assert!(refused("[a\nsize=1m\n").contains("does not end"));
    assert!(refused("[]\nsize=1m\n").contains("empty section"));
}

#[test]
fn dash_dash_keys_are_refused() {
    let e = refused("[a]\n--size=1m\n");
    assert!(e.contains("write `size`"), "{e}");
}

#[test]
fn env_vars_and_unset_is_empty() {
    let env = |k: &str| (k == "SIZE").then(|| "2m".to_string());
    let f = read_str(
        "[a]\nsize=${SIZE}\ndescription=x${NOPE}y\n",
        Path::new("/t/j.fio"),
        &env,
    )
    .unwrap();
    assert_eq!(f.jobs[0].size, Some(SizeSpec::Bytes(2 << 20)));
    assert_eq!(f.jobs[0].description.as_deref(), Some("xy"));
    assert_eq!(f.jobs[0].options[0], ("size".into(), "2m".into()));
}

#[test]
fn keywords_with_arithmetic() {
    let k = syntax::Keywords {
        pagesize: 4096,
        mb_memory: 1000,
        ncpus: 8,
    };
    assert_eq!(k.replace("$ncpus").unwrap(), "8");
    assert_eq!(k.replace("$ncpus*2").unwrap(), "16");
    assert_eq!(k.replace("$mb_memory/3").unwrap(), "333");
    assert_eq!(k.replace("$pagesize").unwrap(), "4096");
    // the host's own values read
    let j = job("[a]\nsize=1m\nnumjobs=$ncpus\nbs=$pagesize\n");
    assert!(j.numjobs >= 1);
    assert!(j.bs[0] >= 4096);
}

#[test]
fn arithmetic_expressions() {
    let j = job("[a]\nsize=(1+3)*1m\nruntime=(1+1)\nthinktime=(2*5)\nramp_time=(2*5)\n");
    assert_eq!(j.size, Some(SizeSpec::Bytes(4 << 20)));
    assert_eq!(j.runtime, Some(Duration::from_secs(2)));
    assert_eq!(j.thinktime, Duration::from_micros(10));
    assert_eq!(j.ramp_time, Duration::from_secs(10));
    // a unit anywhere makes bare numbers the base unit (µs), as fio's parser
    assert_eq!(
        job("[a]\nsize=1m\nthinktime=(1ms+500)\n").thinktime,
        Duration::from_micros(1500)
    );
    // and whole seconds are kept for the seconds options
    assert_eq!(
        job("[a]\nsize=1m\nruntime=(1s+500)\n").runtime,
        Some(Duration::from_secs(1))
    );
    // kb_base does not reach into expressions: k is 1024 there
    assert_eq!(
        job("[a]\nkb_base=1000\nsize=(2*1k)\n").size,
        Some(SizeSpec::Bytes(2048))
    );
    assert!(refused("[a]\nsize=(1/0)\n").contains("division by zero"));
    assert!(refused("[a]\nsize=((1)\n").contains("size"));
}

#[test]
fn include_relative_nested_and_global() {
    let d = Dir::new("inc");
    d.file("common.fio", "size=1m\ninclude deeper.fio\n");
    d.file("deeper.fio", "bs=16k\n");
    let main = d.file("main.fio", "[global]\ninclude common.fio\n[a]\nrw=write\n");
    let f = read_files(&[main], &no_env).unwrap();
    assert_eq!(f.jobs[0].size, Some(SizeSpec::Bytes(1 << 20)));
    assert_eq!(f.jobs[0].bs, [16384, 16384]);
    assert_eq!(f.global_options.len(), 2);
}

#[test]
fn include_refusals() {
    let d = Dir::new("incbad");
    let selfish = d.file("self.fio", "[a]\nsize=1m\ninclude self.fio\n");
    let e = read_files(&[selfish], &no_env).unwrap_err().to_string();
    assert!(e.contains("includes itself"), "{e}");
    d.file("x.fio", "include y.fio\n");
    d.file("y.fio", "include x.fio\n");
    let cyc = d.file("cyc.fio", "[a]\nsize=1m\ninclude x.fio\n");
    let e = read_files(&[cyc], &no_env).unwrap_err().to_string();
    assert!(e.contains("includes itself"), "{e}");
    let missing = d.file("missing.fio", "[a]\nsize=1m\ninclude nowhere.fio\n");
    let e = read_files(&[missing], &no_env).unwrap_err();
    assert_eq!(e.at.as_ref().unwrap().line, 3);
    assert!(e.to_string().contains("nowhere.fio"), "{e}");
    d.file("sect.fio", "[b]\n");
    let sect = d.file("sect-main.fio", "[a]\nsize=1m\ninclude sect.fio\n");
    let e = read_files(&[sect], &no_env).unwrap_err().to_string();
    assert!(e.contains("no [section]"), "{e}");
}

#[test]
fn several_files_get_an_implicit_stonewall() {
    let d = Dir::new("multi");
    let a = d.file("a.fio", "[global]\nsize=1m\n[a1]\n[a2]\n");
    let b = d.file("b.fio", "[global]\nbs=8k\n[b1]\n[b2]\n");
    let f = read_files(&[a, b], &no_env).unwrap();
    let g: Vec<_> = f.jobs.iter().map(|j| (j.stonewall, j.group)).collect();
    assert_eq!(g, [(false, 0), (false, 0), (true, 1), (false, 1)]);
    // globals carry on to the next file
    assert_eq!(f.jobs[2].size, Some(SizeSpec::Bytes(1 << 20)));
    assert_eq!(f.jobs[2].at.file.file_name().unwrap(), "b.fio");
}

// ---- hostile input ----

#[test]
fn hostile_long_line() {
    let long = format!("[a]\nsize=1m\ndescription={}\n", "x".repeat(70_000));
    let e = read(&long).unwrap_err();
    assert_eq!(e.at.as_ref().unwrap().line, 3);
    assert!(e.to_string().contains("at most"), "{e}");
    let huge = format!("[a]\n{}\n", "y".repeat(2 << 20));
    assert!(read(&huge).is_err());
}

#[test]
fn hostile_sizes() {
    for v in [
        "999999999T",
        "99999999999999999999",
        "16e",
        "9p*9",
        "0xffffffffffffffffff",
        "(9^99)",
    ] {
        let e = refused(&format!("[a]\nsize={v}\n"));
        assert!(e.contains("size:"), "{v}: {e}");
        assert_eq!(e.lines().count(), 1);
    }
    assert!(refused("[a]\nsize=1.5g\n").contains("fraction"));
    assert!(refused("[a]\nsize=\n").contains("needs a value"));
    assert!(refused("[a]\nsize=-1\n").contains("negative"));
    assert!(refused("[a]\nsize=101%\n").contains("percentage"));
}

#[test]
fn hostile_bytes_never_panic() {
    let inputs = [
        "[a]\nsize=1m\nrw=read:\n",
        "[a]\nsize=1m\nbs=,,,\n",
        "[a]\nsize=1m\nbs=::\n",
        "[a]\nsize=1m\nbssplit=/:/\n",
        "[a]\nsize=1m\nrandom_distribution=zoned:\n",
        "[a]\nsize=1m\nrandom_distribution=zipf:\n",
        "[a]\nsize=1m\nstartdelay=-\n",
        "[a]\nsize=1m\nruntime=99999999999999d\n",
        "[a]\nsize=1m\nrate=0x\n",
        "[a]\nsize=1m\n=\n",
        "[a]\nsize=${\n",
        "[a]\nsize=1m\nfilename=:::\n",
        "[a]\x00\n",
        "[[[[\n",
        "[a]\nsize=((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))\n",
    ];
    for t in inputs {
        let _ = read(t).map_err(|e| assert_eq!(e.to_string().lines().count(), 1, "{t}"));
    }
}

#[test]
fn hostile_nesting_and_devices() {
    for v in [
        format!("({}1)", "-".repeat(8000)),
        format!("({}1{})", "(".repeat(4000), ")".repeat(4000)),
        format!("(2{})", "^2".repeat(4000)),
    ] {
        let e = refused(&format!("[a]\nsize={v}\n"));
        assert!(e.contains("too deep"), "{e}");
    }
    let d = Dir::new("dev");
    let p = d.file("dev.fio", "[a]\nsize=1m\ninclude /dev/zero\n");
    let e = read_files(&[p], &no_env).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
    let e = read_files(std::slice::from_ref(&d.0), &no_env)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn two_globals_are_valid() {
    let f = read("[global]\nsize=1m\n[global]\nsize=2m\n[a]\n").unwrap();
    assert_eq!(f.jobs[0].size, Some(SizeSpec::Bytes(2 << 20)));
}

// ---- units ----

#[test]
fn size_units() {
    use units::parse_bytes as b;
    assert_eq!(b("4k", 1024), Ok(4096));
    assert_eq!(b("4K", 1024), Ok(4096));
    assert_eq!(b("4kb", 1024), Ok(4096));
    assert_eq!(b("4KiB", 1024), Ok(4000)); // fio's inversion
    assert_eq!(b("4ki", 1024), Ok(4000));
    assert_eq!(b("4k", 1000), Ok(4000));
    assert_eq!(b("4kib", 1000), Ok(4096));
    assert_eq!(b("1g", 1024), Ok(1 << 30));
    assert_eq!(b("2t", 1024), Ok(2 << 40));
    assert_eq!(b("1p", 1024), Ok(1 << 50));
    assert_eq!(b("0x10", 1024), Ok(16));
    assert_eq!(b("0x10k", 1024), Ok(16384));
    assert_eq!(b("512b", 1024), Ok(512));
    assert!(b("4q", 1024).is_err());
    assert!(b("4kx", 1024).is_err());
}

#[test]
fn kb_base_applies_to_the_whole_section_first() {
    let j = job("[a]\nsize=1m\nbs=4k\nkb_base=1000\n");
    assert_eq!(j.bs, [4000, 4000]);
    assert_eq!(j.size, Some(SizeSpec::Bytes(1_000_000)));
    assert!(refused("[a]\nsize=1m\nkb_base=512\n").contains("kb_base"));
}

#[test]
fn time_units() {
    use units::parse_time_us as t;
    assert_eq!(t("10", true), Ok(10_000_000));
    assert_eq!(t("10", false), Ok(10));
    assert_eq!(t("10ms", true), Ok(10_000));
    assert_eq!(t("10us", true), Ok(10));
    assert_eq!(t("10usec", true), Ok(10));
    assert_eq!(t("2m", true), Ok(120_000_000));
    assert_eq!(t("1h", false), Ok(3_600_000_000));
    assert_eq!(t("1d", true), Ok(86_400_000_000));
    assert_eq!(t("1S", true), Ok(1_000_000));
    assert!(t("10min", true).is_err());
    assert!(t("-1", true).is_err());
}

#[test]
fn rwt_splitter() {
    let s = |v: &str| units::split_rwt(v, true).unwrap();
    let o = |x: &str| Some(x.to_string());
    assert_eq!(s("8k"), [o("8k"), o("8k"), o("8k")]);
    assert_eq!(s("8k,32k"), [o("8k"), o("32k"), o("32k")]);
    assert_eq!(s("8k,32k,"), [o("8k"), o("32k"), None]);
    assert_eq!(s(",8k"), [None, o("8k"), o("8k")]);
    assert_eq!(s("4k:8k"), [o("4k"), o("8k"), o("8k")]);
    assert!(units::split_rwt("1,2,3,4", true).is_err());
}

// ---- options ----

#[test]
fn rw_forms_and_modifiers() {
    let j = job("[a]\nsize=1m\nreadwrite=randrw:8\nrw_sequencer=identical\n");
    assert_eq!(j.rw, FioRw::RandRw);
    assert_eq!(j.rw_modifier, Some(RwModifier::NewOffsetEvery(8)));
    assert_eq!(j.rw_sequencer, Sequencer::Identical);
    let j = job("[a]\nsize=1m\nrw=read:-8k\n");
    assert_eq!(j.rw_modifier, Some(RwModifier::Skip(-8192)));
    let j = job("[a]\nsize=1m\nrw=write:4k\n");
    assert_eq!(j.rw_modifier, Some(RwModifier::Skip(4096)));
    assert_eq!(job("[a]\nsize=1m\nrw=rw\n").rw, FioRw::ReadWrite);
    assert_eq!(job("[a]\nsize=1m\nrw=readwrite\n").rw, FioRw::ReadWrite);
    // Trims are read whatever the engine (it may come later); the planning refuses them
    // on any engine but falloc.
    for (t, rw) in [
        ("trim", FioRw::Trim),
        ("randtrim", FioRw::RandTrim),
        ("trimwrite", FioRw::TrimWrite),
    ] {
        assert_eq!(job(&format!("[a]\nsize=1m\nrw={t}\n")).rw, rw);
    }
    let e = refused("[a]\nsize=1m\nrw=randtrimwrite\n");
    assert!(e.contains("trims only on ioengine=falloc"), "{e}");
    assert!(e.starts_with("/t/job.fio:3: rw: "), "{e}");
    assert!(refused("[a]\nsize=1m\nrw=randread:0\n").contains("rw"));
    assert!(refused("[a]\nsize=1m\nrw=sideways\n").contains("not one of"));
}

#[test]
fn block_sizes() {
    let j = job("[a]\nsize=1m\nbs=8k,32k\nba=4k\nbsrange=1k-4k,8k:2k\n");
    assert_eq!(j.bs, [8192, 32768]);
    assert_eq!(j.blockalign, Some([4096, 4096]));
    assert_eq!(j.bsrange, Some([(1024, 4096), (2048, 8192)]));
    let j = job("[a]\nsize=1m\nblocksize=,16k\n");
    assert_eq!(j.bs, [4096, 16384]);
    // Trims' own size: the third value, or the last one given carried on.
    assert_eq!(j.bs_trim, 16384);
    assert_eq!(job("[a]\nsize=1m\nbs=8k,32k,16k\n").bs_trim, 16384);
    assert_eq!(job("[a]\nsize=1m\nbs=8k,32k,\n").bs_trim, 4096);
    assert_eq!(job("[a]\nsize=1m\nbs=8k\n").bs_trim, 8192);
    assert!(refused("[a]\nsize=1m\nbs=0\n").contains("out of range"));
}

#[test]
fn bssplit_rules() {
    let j = job("[a]\nsize=1m\nbssplit=4k/50:8k/:64k/\n");
    assert_eq!(
        j.bssplit.as_ref().unwrap()[0],
        vec![(4096, 50), (8192, 25), (65536, 25)]
    );
    assert_eq!(
        j.bssplit.as_ref().unwrap()[1],
        j.bssplit.as_ref().unwrap()[0]
    );
    let j = job("[a]\nsize=1m\nbssplit=4k/100,64k\n");
    assert_eq!(j.bssplit.as_ref().unwrap()[1], vec![(65536, 100)]);
    assert!(refused("[a]\nsize=1m\nbssplit=4k/60:8k/60\n").contains("over 100"));
    assert!(refused("[a]\nsize=1m\nbssplit=4k/160\n").contains("over 100"));
}

#[test]
fn rwmix_later_wins() {
    assert_eq!(job("[a]\nsize=1m\n").rwmixread, 50);
    assert_eq!(
        job("[a]\nsize=1m\nrwmixread=70\nrwmixwrite=20\n").rwmixread,
        80
    );
    assert_eq!(
        job("[a]\nsize=1m\nrwmixwrite=20\nrwmixread=70\n").rwmixread,
        70
    );
    assert!(refused("[a]\nsize=1m\nrwmixread=101\n").contains("out of range"));
}

#[test]
fn distributions() {
    let d = |v: &str| job(&format!("[a]\nsize=1m\nrandom_distribution={v}\n")).distribution;
    assert_eq!(d("random"), FioDistribution::Random);
    assert_eq!(
        d("zipf"),
        FioDistribution::Zipf {
            theta: 1.1,
            center: None
        }
    );
    assert_eq!(
        d("zipf:1.2:0.5"),
        FioDistribution::Zipf {
            theta: 1.2,
            center: Some(0.5)
        }
    );
    assert_eq!(
        d("pareto:0.3"),
        FioDistribution::Pareto {
            h: 0.3,
            center: None
        }
    );
    assert_eq!(
        d("normal:10"),
        FioDistribution::Normal {
            dev: 10.0,
            center: None
        }
    );
    assert_eq!(
        d("zoned:60/10:30/20:10/"),
        FioDistribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)])
    );
    assert_eq!(
        d("zoned_abs:80/1m:20/4m"),
        FioDistribution::ZonedAbs(vec![(80.0, 1 << 20), (20.0, 4 << 20)])
    );
    assert_eq!(
        d("zoned:50/50:50/50,50/50:50/50"),
        FioDistribution::Zoned(vec![(50.0, 50.0), (50.0, 50.0)])
    );
    let r = |v: &str| refused(&format!("[a]\nsize=1m\nrandom_distribution={v}\n"));
    assert!(r("zipf:1").contains("not 1"));
    assert!(r("pareto:1.5").contains("between 0 and 1"));
    assert!(r("normal:100").contains("below 100"));
    assert!(r("zipf:1.2:2").contains("center"));
    assert!(r("zoned:60/10:30/20").contains("add up to 90"));
    assert!(r("zoned:60/60:40/60").contains("over 100"));
    assert!(r("zoned_abs=80/1m:20/4m").contains("colon"));
    assert!(r("zoned:60/10:40/90,100/100").contains("differ"));
    assert!(r("gauss").contains("unknown distribution"));
    let many = (0..257).map(|_| "0/0").collect::<Vec<_>>().join(":");
    assert!(r(&format!("zoned:{many}")).contains("256"));
}

#[test]
fn random_knobs() {
    let j = job("[a]\nsize=1m\nnorandommap\nrandrepeat=0\nrandseed=1234\nrandom_generator=lfsr\n");
    assert!(j.norandommap);
    assert!(!j.randrepeat);
    assert_eq!(j.randseed, Some(1234));
    assert_eq!(j.random_generator, "lfsr");
    let j = job("[a]\nsize=1m\n");
    assert!(j.randrepeat);
    assert_eq!(j.random_generator, "tausworthe");
    assert!(refused("[a]\nsize=1m\nrandom_generator=mt\n").contains("random_generator"));
    assert!(refused("[a]\nsize=1m\nrandrepeat\n").contains("needs a value"));
}

#[test]
fn files_and_names() {
    let j = job("[a]\nfilename=/dev/null\n");
    assert_eq!(j.filenames, vec![std::path::PathBuf::from("/dev/null")]);
    assert_eq!(j.files_of(3), vec![std::path::PathBuf::from("/dev/null")]);
    let j = job("[a]\nsize=1m\nfilename=x\\:y:z\ndirectory=/d1:/d2\n");
    assert_eq!(
        j.files_of(0),
        vec![std::path::PathBuf::from("/d1/x:y"), "/d1/z".into()]
    );
    assert_eq!(j.files_of(1)[0], std::path::PathBuf::from("/d2/x:y"));
    let j = job("[job1]\nsize=1m\nnrfiles=2\ndirectory=/data\n");
    assert_eq!(j.filename_format, "$jobname.$jobnum.$filenum");
    assert_eq!(
        j.files_of(3),
        vec![
            std::path::PathBuf::from("/data/job1.3.0"),
            "/data/job1.3.1".into()
        ]
    );
    let j = job("[w]\nsize=1m\nfilename_format=f.$clientuid.$jobnum\n");
    assert_eq!(j.files_of(2), vec![std::path::PathBuf::from("f.0.2")]);
    // An absolute name goes after the directory too, as fio concatenates them.
    let j = job("[a]\nsize=1m\nfilename=/x/y\ndirectory=/d\n");
    assert_eq!(j.files_of(0), vec![std::path::PathBuf::from("/d//x/y")]);
    // fio adds a job's filename to the ones it inherited
    let f = read("[global]\nfilename=/a\n[j]\nfilename=/b\n").unwrap();
    assert_eq!(f.jobs[0].filenames.len(), 2);
}

#[test]
fn size_options() {
    let j = job("[a]\nsize=50%\nfilesize=1m-4m\nio_limit=8m\noffset=10%\noffset_increment=1g\n");
    assert_eq!(j.size, Some(SizeSpec::Percent(50)));
    assert_eq!(j.filesize, Some((1 << 20, 4 << 20)));
    assert_eq!(j.io_size, Some(8 << 20));
    assert_eq!(j.offset, Some(SizeSpec::Percent(10)));
    assert_eq!(j.offset_increment, 1 << 30);
    assert!(
        refused("[a]\nrw=read\n").contains("need a size")
            || refused("[a]\nrw=read\n").contains("size=")
    );
    assert!(refused("[a]\nsize=4z\n").contains("zone"));
}

#[test]
fn time_options() {
    let j = job(
        "[a]\nsize=1m\nruntime=30\ntime_based\nramp_time=5s\nstartdelay=1-3\nloops=2\nnumber_ios=100\n",
    );
    assert_eq!(j.runtime, Some(Duration::from_secs(30)));
    assert!(j.time_based);
    assert_eq!(j.ramp_time, Duration::from_secs(5));
    assert_eq!(
        j.startdelay,
        (Duration::from_secs(1), Duration::from_secs(3))
    );
    assert_eq!(j.loops, 2);
    assert_eq!(j.number_ios, Some(100));
    let j = job("[a]\nsize=1m\ntimeout=2m\nstartdelay=500ms\n");
    assert_eq!(j.runtime, Some(Duration::from_secs(120)));
    assert_eq!(
        j.startdelay,
        (Duration::from_millis(500), Duration::from_millis(500))
    );
    // fio drops time_based without a runtime
    assert!(!job("[a]\nsize=1m\ntime_based\n").time_based);
}

#[test]
fn rate_options() {
    let j = job(
        "[a]\nsize=1m\nrate=1m,2m\nrate_iops=500\nrate_min=100k\nrate_iops_min=,10\nrate_process=poisson\nthinktime=100\nthinktime_blocks=4\nthinktime_spin=10\n",
    );
    assert_eq!(j.rate, [Some(1 << 20), Some(2 << 20)]);
    assert_eq!(j.rate_iops, [Some(500), Some(500)]);
    assert_eq!(j.rate_min, [Some(100 << 10), Some(100 << 10)]);
    assert_eq!(j.rate_iops_min, [None, Some(10)]);
    assert_eq!(j.rate_process, RateProcess::Poisson);
    assert_eq!(j.thinktime, Duration::from_micros(100));
    assert_eq!(j.thinktime_blocks, 4);
    assert_eq!(j.thinktime_spin, Duration::from_micros(10));
    assert!(refused("[a]\nsize=1m\nrate_process=bursty\n").contains("rate_process"));
}

#[test]
fn engines_and_depths() {
    let j = job("[a]\nsize=1m\n");
    assert_eq!(j.ioengine, FioEngine::Psync);
    assert_eq!(
        (j.iodepth, j.iodepth_low, j.iodepth_batch_complete_max),
        (1, 1, 1)
    );
    let j = job(
        "[a]\nsize=1m\nioengine=io_uring\niodepth=32\niodepth_batch=8\niodepth_batch_complete=4\nio_submit_mode=inline\n",
    );
    assert_eq!(j.ioengine, FioEngine::IoUring);
    assert_eq!(j.iodepth, 32);
    assert_eq!(j.iodepth_batch_submit, 8);
    assert_eq!(j.iodepth_batch_complete_min, 4);
    assert_eq!(j.iodepth_batch_complete_max, 32);
    assert_eq!(j.iodepth_low, 32);
    for e in [
        "libaio",
        "sync",
        "pvsync",
        "pvsync2",
        "null",
        "falloc",
        "ftruncate",
        "filestat",
        "filedelete",
    ] {
        assert_eq!(
            job(&format!("[a]\nsize=1m\nioengine={e}\n"))
                .ioengine
                .name(),
            e
        );
    }
    let j = job("[a]\nsize=1m\nioengine=filestat\nstat_type=stat\n");
    assert_eq!(j.ioengine, FioEngine::FileStat);
    let e = refused("[a]\nsize=1m\nioengine=filestat\nstat_type=statx\n");
    assert!(
        e.contains("/t/job.fio:4: stat_type: `statx` is not supported yet"),
        "{e}"
    );
    assert!(refused("[a]\nsize=1m\nioengine=posixaio\n").contains("posixaio"));
    assert!(refused("[a]\nsize=1m\nioengine=rbd\n").contains("no perflab equivalent"));
    assert!(refused("[a]\nsize=1m\nio_submit_mode=offload\n").contains("offload"));
    assert!(refused("[a]\nsize=1m\niodepth=0\n").contains("iodepth"));
    assert!(
        refused(
            "[a]\nsize=1m\niodepth=8\niodepth_batch_complete_min=4\niodepth_batch_complete_max=2\n"
        )
        .contains("below")
    );
}

#[test]
fn caching_and_syncing() {
    let j = job("[a]\nsize=1m\n");
    assert!(!j.direct && j.invalidate && j.sync == SyncIo::None);
    let j = job(
        "[a]\nsize=1m\nbuffered=0\ninvalidate=0\nsync=1\nfsync=4\nfdatasync=2\nfsync_on_close=1\nend_fsync=1\n",
    );
    assert!(j.direct && !j.invalidate && j.sync == SyncIo::Sync);
    assert_eq!((j.fsync, j.fdatasync), (4, 2));
    assert!(j.fsync_on_close && j.end_fsync);
    assert_eq!(
        job("[a]\nsize=1m\ndirect=1\nsync=sync\n").sync,
        SyncIo::Sync
    );
    assert_eq!(job("[a]\nsize=1m\nsync=dsync\n").sync, SyncIo::Dsync);
    assert_eq!(job("[a]\nsize=1m\nsync=dsync\nsync=0\n").sync, SyncIo::None);
    assert!(refused("[a]\nsize=1m\nsync=full\n").contains("none, 0, sync, 1, dsync"));
    assert!(refused("[a]\nsize=1m\ndirect\n").contains("needs a value"));
    assert!(refused("[a]\nsize=1m\ndirect=yes\n").contains("not 0 or 1"));
}

#[test]
fn jobs_verify_buffers() {
    let j = job("[a]\nsize=1m\nnumjobs=4\nunlink=1\nverify=crc32c\ndo_verify=0\n");
    assert_eq!(j.numjobs, 4);
    assert!(j.unlink);
    assert_eq!(j.verify.as_deref(), Some("crc32c"));
    assert!(!j.do_verify);
    assert_eq!(job("[a]\nsize=1m\nverify=0\n").verify, None);
    // fio's null method only pretends: nothing is checked.
    assert_eq!(job("[a]\nsize=1m\nverify=null\n").verify, None);
    let j = job(
        "[a]\nsize=1m\nverify=xxhash\nverify_fatal=1\nverify_dump=1\nverifysort=0\nverifysort_nr=8\n",
    );
    assert!(j.verify_fatal && j.verify_dump);
    assert!(refused("[a]\nsize=1m\nverify_only=1\n").contains("rw=read"));
    assert!(refused("[a]\nsize=1m\nverify_async=2\n").contains("thread that reads it"));
    assert!(refused("[a]\nsize=1m\nverify=rot13\n").contains("unknown verify"));
    let j = job("[a]\nsize=1m\n");
    assert_eq!(j.buffers, Buffers::Random);
    assert!(j.scramble_buffers);
    assert_eq!(j.buffer_compress_chunk, 512);
    let j = job(
        "[a]\nsize=1m\nbuffer_compress_percentage=40\nbuffer_compress_chunk=4k\nrefill_buffers\nscramble_buffers=0\n",
    );
    assert_eq!(j.buffers, Buffers::Compressible(40));
    assert_eq!(j.buffer_compress_chunk, 4096);
    assert!(j.refill_buffers && !j.scramble_buffers);
    assert_eq!(job("[a]\nsize=1m\nzero_buffers\n").buffers, Buffers::Zero);
}

#[test]
fn buffer_contents_options() {
    let j = job("[a]\nsize=1m\n");
    assert_eq!(j.buffer_pattern, None);
    assert_eq!(
        (j.dedupe_percentage, j.dedupe_mode),
        (0, DedupeMode::Repeat)
    );
    assert_eq!(j.dedupe_working_set_percentage, 5);
    assert!(!j.dedupe_global && !j.refill_buffers_set && !j.compress_written);
    let j = job(
        "[a]\nsize=1m\nrw=write\nbuffer_pattern=0xdead\"ab\"\ndedupe_percentage=30\ndedupe_mode=working_set\ndedupe_working_set_percentage=20\ndedupe_global=1\n",
    );
    assert_eq!(
        j.buffer_pattern.as_deref(),
        Some(&[0xde, 0xad, b'a', b'b'][..])
    );
    assert_eq!(j.dedupe_percentage, 30);
    assert_eq!(j.dedupe_mode, DedupeMode::WorkingSet);
    assert_eq!(j.dedupe_working_set_percentage, 20);
    assert!(j.dedupe_global && j.compress_written);
    // A dedupe percentage refills at its line; a later refill_buffers=0 wins, as in fio.
    assert!(job("[a]\nsize=1m\ndedupe_percentage=5\n").refill_buffers);
    let j = job("[a]\nsize=1m\ndedupe_percentage=5\nrefill_buffers=0\n");
    assert!(!j.refill_buffers && j.refill_buffers_set);
    // A pattern turns scrambling and zeroing off.
    let j = job("[a]\nsize=1m\nzero_buffers\nbuffer_pattern=1\n");
    assert!(!j.zero_buffers && !j.scramble_buffers);
    assert!(refused("[a]\nsize=1m\ndedupe_percentage=101\n").contains("dedupe_percentage"));
    assert!(refused("[a]\nsize=1m\ndedupe_mode=sometimes\n").contains("repeat, working_set"));
    assert!(refused("[a]\nsize=1m\nbuffer_pattern=%o\n").contains("verify_pattern"));
}

#[test]
fn flow_options() {
    let j = job("[a]\nsize=1m\n");
    assert_eq!((j.flow_id, j.flow, j.flow_sleep_us), (0, 0, 0));
    let j = job("[a]\nsize=1m\nflow_id=3\nflow=8\nflow_sleep=1000\nflow_watermark=100\n");
    assert_eq!((j.flow_id, j.flow, j.flow_sleep_us), (3, 8, 1000));
    assert!(refused("[a]\nsize=1m\nflow=1001\n").contains("flow"));
    assert!(refused("[a]\nsize=1m\nflow_sleep\n").contains("needs a value"));
}

#[test]
fn steady_state() {
    assert_eq!(job("[a]\nsize=1m\nss=iops:5%\n").steadystate, None);
    let j = job("[a]\nsize=1m\nss=bw_slope:10m\nss_dur=60\nss_ramp=5\n");
    let s = j.steadystate.unwrap();
    assert_eq!(s.criterion, SsCriterion::BwSlope);
    assert_eq!(s.limit, (10u64 << 20) as f64);
    assert!(!s.percent);
    assert_eq!(s.dur, Duration::from_secs(60));
    assert_eq!(s.ramp, Duration::from_secs(5));
    assert_eq!(s.interval, Duration::from_secs(1));
    let s = job("[a]\nsize=1m\nsteadystate_duration=30\n")
        .steadystate
        .unwrap();
    assert_eq!(
        (s.criterion, s.limit, s.percent),
        (SsCriterion::IopsSlope, 0.01, true)
    );
    let s = job("[a]\nsize=1m\nsteadystate=lat:2ms\nss_dur=1m\n")
        .steadystate
        .unwrap();
    assert_eq!(s.limit, 2000.0);
    assert!(refused("[a]\nsize=1m\nss=iops\n").contains("limit"));
    assert!(refused("[a]\nsize=1m\nss=speed:1\n").contains("unknown criterion"));
    // What fio's fixup_options rejects.
    let e = refused("[a]\nsize=1m\nss_dur=10\nss_interval=500ms\n");
    assert!(e.contains("ss_interval: must be at least 1s"), "{e}");
    let e = refused("[a]\nsize=1m\nss_dur=5\nss_interval=2\n");
    assert!(e.contains("ss_dur:") && e.contains("multiple"), "{e}");
    assert!(refused("[a]\nsize=1m\nss_dur=2\nss_interval=2\n").contains("ss_dur:"));
    let s = job("[a]\nsize=1m\nss_dur=6\nss_interval=2\n")
        .steadystate
        .unwrap();
    assert_eq!(s.interval, Duration::from_secs(2));
}

#[test]
fn exitall_and_exit_what() {
    let j = job("[a]\nsize=1m\n");
    assert!(!j.exitall);
    assert_eq!(j.exit_what, ExitWhat::Group);
    let f =
        read("[global]\nsize=1m\nexitall=1\n[a]\nexit_what=stonewall\n[b]\nexit_what=all\n[c]\n")
            .unwrap();
    assert!(f.jobs.iter().all(|j| j.exitall));
    let what: Vec<ExitWhat> = f.jobs.iter().map(|j| j.exit_what).collect();
    assert_eq!(what, [ExitWhat::Stonewall, ExitWhat::All, ExitWhat::Group]);
    // fio turns exitall on whatever its value says: `exitall=0` would mislead.
    let e = refused("[a]\nsize=1m\nexitall=0\n");
    assert!(
        e.contains("job.fio:3: exitall:") && e.contains("remove the line"),
        "{e}"
    );
    assert!(refused("[a]\nsize=1m\nexit_what=some\n").contains("group, stonewall, all"));
}

#[test]
fn logs() {
    let f = read("[global]\nwrite_bw_log\nsize=1m\n[a]\nwrite_lat_log=lat\nlog_avg_msec=500\nlog_offset=1\nper_job_logs=0\n[b]\nwrite_iops_log\nwrite_hist_log=h\n").unwrap();
    assert_eq!(f.jobs[0].write_bw_log.as_deref(), Some("a"));
    assert_eq!(f.jobs[1].write_bw_log.as_deref(), Some("b"));
    assert_eq!(f.jobs[0].write_lat_log.as_deref(), Some("lat"));
    assert_eq!(f.jobs[0].log_avg_msec, 500);
    assert!(f.jobs[0].log_offset && !f.jobs[0].per_job_logs);
    assert_eq!(f.jobs[1].write_iops_log.as_deref(), Some("b"));
    assert_eq!(f.jobs[1].write_hist_log.as_deref(), Some("h"));
}

#[test]
fn log_prefixes_and_windows_as_fio() {
    // A bare flag keeps an inherited prefix (fio's callback sets one only when given), else
    // is the job's name, `name=` included wherever it is written.
    let f = read("[global]\nwrite_bw_log=foo\nsize=1m\n[a]\nwrite_bw_log\nwrite_iops_log\nname=renamed\n[b]\nwrite_lat_log=\n").unwrap();
    assert_eq!(f.jobs[0].write_bw_log.as_deref(), Some("foo"));
    assert_eq!(f.jobs[0].write_iops_log.as_deref(), Some("renamed"));
    assert_eq!(f.jobs[1].write_lat_log.as_deref(), Some("b"));
    let j = job(
        "[a]\nsize=1m\nbwavgtime=200\niopsavgtime=300\nlog_unix_epoch=1\nlog_alternate_epoch=0\n",
    );
    assert_eq!((j.bw_avg_time, j.iops_avg_time), (Some(200), Some(300)));
    assert!(j.log_unix_epoch && !j.log_alternate_epoch);
}

#[test]
fn gtod_reduce_turns_the_latencies_off_as_fio() {
    let j = job("[a]\nsize=1m\ngtod_reduce=1\n");
    assert!(j.gtod_reduce && j.disable_lat && j.disable_clat && j.disable_slat && j.disable_bw);
    assert!(!j.clat_percentiles && !j.lat_percentiles && !j.slat_percentiles);
    // =0 leaves them as they are; a later line sets one again.
    let j = job("[a]\nsize=1m\ndisable_clat=1\ngtod_reduce=0\n");
    assert!(!j.gtod_reduce && j.disable_clat && !j.disable_lat);
    let j = job("[a]\nsize=1m\ngtod_reduce=1\ndisable_lat=0\n");
    assert!(!j.disable_lat && j.disable_clat);
    let j = job("[a]\nsize=1m\ndisable_bw_measurement=1\nstats=0\n");
    assert!(j.disable_bw && !j.stats);
}

#[test]
fn reporting_options() {
    let j = job(
        "[a]\nsize=1m\nname=renamed\ndescription=d\nthread\ngroup_reporting\nclat_percentiles=0\nlat_percentiles=1\nslat_percentiles=1\npercentile_list=50:99:99.9\nunified_rw_reporting=mixed\ndisable_slat=1\ngtod_reduce=0\nexitall\nstats=1\n",
    );
    assert_eq!(j.name, "renamed");
    assert!(j.thread && j.group_reporting);
    assert!(!j.clat_percentiles && j.lat_percentiles && j.slat_percentiles);
    assert_eq!(j.percentile_list, vec![50.0, 99.0, 99.9]);
    assert_eq!(j.unified_rw_reporting, "mixed");
    assert_eq!(job("[a]\nsize=1m\n").percentile_list.len(), 17);
    assert_eq!(
        job("[a]\nsize=1m\nunified_rw_reporting=2\n").unified_rw_reporting,
        "both"
    );
    let many = (1..=21)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(":");
    assert!(refused(&format!("[a]\nsize=1m\npercentile_list={many}\n")).contains("at most 20"));
}

#[test]
fn refusals_name_file_line_option_and_fix() {
    let e = read("[a]\nsize=1m\ncpus_allowed=0-3\n").unwrap_err();
    assert_eq!(e.option.as_deref(), Some("cpus_allowed"));
    assert_eq!(e.at.as_ref().unwrap().line, 3);
    assert!(
        e.to_string().starts_with("/t/job.fio:3: cpus_allowed: "),
        "{e}"
    );
    assert!(e.to_string().contains("taskset"), "{e}");
    for (opt, want) in [
        ("numa_cpu_nodes=0", "numactl"),
        ("zonemode=zbd", "zoned"),
        ("exec_prerun=ls", "runs no commands"),
        ("verify_async=2", "thread that reads it"),
        ("nice=5", "nice"),
        ("fallocate=none", "cannot honour"),
        ("hipri", "cannot honour"),
    ] {
        let e = refused(&format!("[a]\nsize=1m\n{opt}\n"));
        assert!(e.contains(want), "{opt}: {e}");
    }
    assert!(read("[a]\nsize=1m\nzonemode=none\n").is_ok());
}

#[test]
fn unknown_options() {
    let e = refused("[a]\nsize=1m\nfrobnicate=1\n");
    assert!(e.contains("frobnicate: unknown option"), "{e}");
    let e = refused("[a]\nsize=1m\niodepht=4\n");
    assert!(e.contains("did you mean iodepth"), "{e}");
    assert!(
        options::duplicate_names().is_empty(),
        "{:?}",
        options::duplicate_names()
    );
}

// ---- groups ----

#[test]
fn realistic_file_groups() {
    let text = "\
[global]
ioengine=libaio
direct=1
size=256m
directory=/mnt/test
group_reporting

[seq-write]
rw=write
bs=1m

[seq-read]
stonewall
rw=read
bs=1m
numjobs=4

[rand-read]
rw=randread
bs=4k
iodepth=16
numjobs=4

[rand-write]
new_group
rw=randwrite
bs=4k

[verify-after]
wait_for=rand-write
rw=read
";
    let f = read(text).unwrap();
    let g: Vec<(&str, u32, u32)> = f
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.group, j.numjobs))
        .collect();
    assert_eq!(
        g,
        [
            ("seq-write", 0, 1),
            ("seq-read", 1, 4),
            ("rand-read", 1, 4),
            ("rand-write", 2, 1),
            ("verify-after", 2, 1),
        ]
    );
    assert_eq!(f.jobs[4].wait_for.as_deref(), Some("rand-write"));
    assert!(
        f.jobs
            .iter()
            .all(|j| j.direct && j.ioengine == FioEngine::Libaio)
    );
    assert_eq!(
        f.jobs[2].files_of(1),
        vec![std::path::PathBuf::from("/mnt/test/rand-read.1.0")]
    );
    assert_eq!(f.global_options.len(), 5);
    assert_eq!(f.jobs[1].at.line, 12);
}

#[test]
fn stonewall_on_first_job_changes_nothing() {
    let f = read("[global]\nsize=1m\n[a]\nstonewall\n[b]\nnew_group\n[c]\n").unwrap();
    let g: Vec<_> = f.jobs.iter().map(|j| j.group).collect();
    assert_eq!(g, [0, 1, 1]);
}

#[test]
fn wait_for_refusals() {
    assert!(refused("[global]\nsize=1m\n[a]\nwait_for=b\n[b]\n").contains("no earlier job"));
    assert!(refused("[global]\nsize=1m\n[a]\nwait_for=a\n").contains("itself"));
    assert!(refused("[global]\nsize=1m\n[a]\n[a]\n[c]\nwait_for=a\n").contains("2 earlier jobs"));
}

#[test]
fn group_reporting_needs_equal_lat_percentiles() {
    let e = refused("[global]\nsize=1m\ngroup_reporting\n[a]\n[b]\nlat_percentiles=1\n");
    assert!(e.contains("lat_percentiles"), "{e}");
}

#[test]
fn the_tiobench_profiles_options_are_accepted_and_change_nothing() {
    // fio's own examples/waitfor.fio sets threads=1, an option of the tiobench profile.
    let j = job("[global]\nthreads=1\n[a]\nsize=1m\n");
    assert_eq!(j.numjobs, 1);
    assert!(!j.thread);
}
