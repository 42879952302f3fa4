//! A throwaway Prometheus (Debian's `prometheus`) scraping one target every second, with its
//! own data folder and web port, and its HTTP query API read by a few lines of HTTP.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Prometheus {
    child: Child,
    dir: PathBuf,
    port: u16,
}

/// A port nobody listens on now; the caller's server binds it soon after.
pub fn free_port() -> u16 {
    perflab::env::ports::free_port().expect("a free port on 127.0.0.1")
}

impl Prometheus {
    /// Starts one that scrapes `127.0.0.1:target` every second; None (after saying why) when
    /// there is no prometheus here and the servers are not required.
    pub fn start(target: u16) -> Option<Prometheus> {
        let bin = super::skip::program("prometheus", "prometheus")?;
        let dir = std::env::temp_dir().join(format!(
            "perflab-prometheus-{}-{target}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder for prometheus");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: perflab\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .expect("prometheus.yml written");
        let port = free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).expect("a log file");
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("prometheus starts");
        let p = Prometheus { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if p.get("/-/ready").is_some_and(|(code, _)| code == 200) {
                return Some(p);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("prometheus did not become ready: {}", p.log());
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    /// `GET path`: the status code and the body.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        let code = text.split_whitespace().nth(1)?.parse().ok()?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
        Some((code, body))
    }

    /// An instant query: each series' labels and value.
    pub fn query(&self, promql: &str) -> Vec<(serde_json::Value, f64)> {
        let encoded: String = promql
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (code, body) = self
            .get(&format!("/api/v1/query?query={encoded}"))
            .expect("prometheus answers");
        assert_eq!(code, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON from prometheus");
        v["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|r| {
                let value = r["value"][1]
                    .as_str()
                    .unwrap_or("NaN")
                    .parse()
                    .unwrap_or(f64::NAN);
                (r["metric"].clone(), value)
            })
            .collect()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
