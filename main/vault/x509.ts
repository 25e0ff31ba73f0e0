/**
 * Just enough X.509 to be a certificate authority for the egress proxy: a self-signed CA and
 * server certificates for one host name or IP address each, ECDSA P-256 with SHA-256. Written
 * here (DER by hand, signing by node:crypto) because node:crypto parses certificates but cannot
 * make them, and the libraries that can either block the event loop (pure-JS RSA) or pull in a
 * tree of ASN.1 packages for these few fields. Every signature and key generation is async.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { promisify } from 'node:util';

const generateKeyPair = promisify(crypto.generateKeyPair);
const sign = promisify(crypto.sign);

/** A key and its certificate, both PEM. */
export interface KeyAndCert {
  keyPem: string;
  certPem: string;
}

// --- DER -------------------------------------------------------------------------------------

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const octets = (b: Buffer) => tlv(0x04, b);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);

function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, v[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const parts = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) parts.unshift(0x80 | (v & 0x7f));
    out.push(...parts);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A BIT STRING of whole bytes (signatures, keys). */
const bits = (b: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));

/** A named-bit BIT STRING of one byte (key usage), trailing zero bits left out as DER wants. */
function flags(byte: number): Buffer {
  let unused = 0;
  while (unused < 7 && !(byte & (1 << unused))) unused++;
  return tlv(0x03, Buffer.from([unused, byte]));
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'; // YYYYMMDDHHMMSSZ
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii')) : tlv(0x18, Buffer.from(iso, 'ascii'));
}

const name = (cn: string) => seq(set(seq(oid('2.5.4.10'), tlv(0x0c, Buffer.from('Corral', 'utf8')))), set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(cn, 'utf8')))));
const ext = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const keyId = (spki: Buffer) => crypto.createHash('sha1').update(spki).digest();

function ipBytes(ip: string): Buffer {
  if (net.isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  // Expand '::' and write eight 16-bit groups.
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.concat(groups.map((g) => Buffer.from([(parseInt(g, 16) >> 8) & 0xff, parseInt(g, 16) & 0xff])));
}

// --- certificates ----------------------------------------------------------------------------

interface CertSpec {
  subject: string;
  issuer: string;
  subjectSpki: Buffer;
  issuerSpki: Buffer;
  issuerKey: crypto.KeyObject;
  days: number;
  extensions: Buffer[];
}

async function certificate(s: CertSpec): Promise<string> {
  const serial = crypto.randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and never zero
  // An hour back: a hand's clock a little behind the host's must still accept it.
  const from = new Date(Date.now() - 3600_000);
  const to = new Date(from.getTime() + s.days * 86400_000);
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    name(s.issuer),
    seq(time(from), time(to)),
    name(s.subject),
    s.subjectSpki,
    explicit(3, seq(...s.extensions, ext('2.5.29.14', false, octets(keyId(s.subjectSpki))), ext('2.5.29.35', false, seq(tlv(0x80, keyId(s.issuerSpki)))))),
  );
  const signature = await sign('sha256', tbs, s.issuerKey);
  const der = seq(tbs, ECDSA_SHA256, bits(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

async function ecKey(): Promise<{ key: crypto.KeyObject; spki: Buffer }> {
  const { privateKey, publicKey } = await generateKeyPair('ec', { namedCurve: 'prime256v1' });
  return { key: privateKey, spki: publicKey.export({ type: 'spki', format: 'der' }) };
}

/** A new self-signed certificate authority (ten years), allowed to sign server certificates only. */
export async function makeCa(commonName: string): Promise<KeyAndCert> {
  const { key, spki } = await ecKey();
  const certPem = await certificate({
    subject: commonName,
    issuer: commonName,
    subjectSpki: spki,
    issuerSpki: spki,
    issuerKey: key,
    days: 3650,
    extensions: [ext('2.5.29.19', true, seq(bool(true), integer(Buffer.from([0])))), ext('2.5.29.15', true, flags(0x06))],
  });
  return { keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string, certPem };
}

/** A leaf key shared by the server certificates one CA mints (one key generation, not one per host). */
export async function makeLeafKey(): Promise<{ keyPem: string; spki: Buffer }> {
  const { key, spki } = await ecKey();
  return { keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string, spki };
}

/** A server certificate for one DNS name or IP address, signed by the CA (about a year). */
export async function mintServerCert(ca: KeyAndCert, leafSpki: Buffer, host: string): Promise<string> {
  const caKey = crypto.createPrivateKey(ca.keyPem);
  const caSpki = crypto.createPublicKey(caKey).export({ type: 'spki', format: 'der' });
  const caName = new crypto.X509Certificate(ca.certPem).subject.split('\n').find((l) => l.startsWith('CN='))?.slice(3) ?? 'Corral';
  const san = net.isIP(host) ? tlv(0x87, ipBytes(host)) : tlv(0x82, Buffer.from(host, 'ascii'));
  return certificate({
    subject: host,
    issuer: caName,
    subjectSpki: leafSpki,
    issuerSpki: caSpki,
    issuerKey: caKey,
    days: 365,
    extensions: [
      ext('2.5.29.19', true, seq()),
      ext('2.5.29.15', true, flags(0x80)),
      ext('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))),
      ext('2.5.29.17', false, seq(san)),
    ],
  });
}
