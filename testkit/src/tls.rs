//! Test certificates (rcgen) and a TLS client (rustls) for the TLS tests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use super::{Client, Duplex, Server};

/// A certificate authority that signs server and client certificates.
pub struct Ca {
    /// Its self-signed certificate.
    pub cert: Certificate,
    key: KeyPair,
}

/// A certificate and its key, as PEM.
pub struct Pair {
    /// The certificate (PEM).
    pub cert: String,
    /// Its private key (PEM).
    pub key: String,
}

impl Ca {
    /// A new authority named `name`.
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// Its certificate as PEM.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A certificate for `localhost` and 127.0.0.1 (server) or a client named `name`.
    pub fn issue(&self, name: &str, server: bool) -> Pair {
        let key = KeyPair::generate().unwrap();
        let sans = if server {
            vec!["localhost".to_string(), "127.0.0.1".to_string()]
        } else {
            Vec::new()
        };
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        Pair {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

impl Pair {
    /// Writes `NAME.pem` and `NAME.key` into `dir`; returns their paths.
    pub fn write(&self, dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        let (cert, key) = (
            dir.join(format!("{name}.pem")),
            dir.join(format!("{name}.key")),
        );
        std::fs::write(&cert, &self.cert).unwrap();
        std::fs::write(&key, &self.key).unwrap();
        (cert, key)
    }
}

/// A TLS stream to 127.0.0.1:`port` trusting `ca_pem`, showing `client` when given; the
/// handshake is done before it returns (an error when the server refuses it).
pub fn connect(port: u16, ca_pem: &str, client: Option<&Pair>) -> std::io::Result<Box<dyn Duplex>> {
    Ok(Box::new(handshake(port, ca_pem, client)?))
}

/// [`connect`], keeping rustls's connection and the socket apart (to send raw records).
pub fn handshake(
    port: u16,
    ca_pem: &str,
    client: Option<&Pair>,
) -> std::io::Result<StreamOwned<ClientConnection, TcpStream>> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some(pair) => builder
            .with_client_auth_cert(
                vec![CertificateDer::from_pem_slice(pair.cert.as_bytes()).unwrap()],
                PrivateKeyDer::from_pem_slice(pair.key.as_bytes()).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    let conn = ClientConnection::new(Arc::new(config), ServerName::try_from("localhost").unwrap())
        .map_err(std::io::Error::other)?;
    let tcp = TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    tcp.set_write_timeout(Some(Duration::from_secs(10)))?;
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    Ok(tls)
}

/// Sends `PING` over a fresh TLS connection; the reply line, or the error that ended it (with
/// TLS 1.3 a refused client certificate shows only at the first read).
pub fn ping(port: u16, ca_pem: &str, client: Option<&Pair>) -> Result<String, String> {
    let mut s = connect(port, ca_pem, client).map_err(|e| e.to_string())?;
    s.write_all(b"*1\r\n$4\r\nPING\r\n")
        .map_err(|e| e.to_string())?;
    let mut reply = [0u8; 64];
    match s.read(&mut reply) {
        Ok(0) => Err("closed".into()),
        Ok(n) => Ok(String::from_utf8_lossy(&reply[..n]).into_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// A RESP client over TLS.
pub fn client(port: u16, ca_pem: &str, client: Option<&Pair>) -> Client {
    Client::over(connect(port, ca_pem, client).expect("TLS connect"))
}

/// A server in `dir` serving TLS with a certificate `ca` issued for it, with `extra` arguments.
pub fn server(dir: &Path, ca: &Ca, extra: &[String]) -> Server {
    let (cert, key) = ca.issue("server", true).write(dir, "server");
    let mut args = vec![
        format!("--tls-cert={}", cert.display()),
        format!("--tls-key={}", key.display()),
    ];
    args.extend_from_slice(extra);
    Server::spawn(dir.to_path_buf(), args)
}
