/**
 * The egress proxy's certificate authority: one per host install, made on first use and kept in
 * the data folder (`egress-ca.key`, 0600, never leaves the host; `egress-ca.pem`, the public
 * certificate hands are given to trust). It mints a server certificate for each allowed host the
 * proxy terminates TLS for, cached for the life of the process.
 *
 * With the vault's sealer (the host always gives it) the private key is sealed like a credential
 * (AES-256-GCM under the vault key), so the data folder copied away without the key does not let
 * anyone mint certificates hands trust. A plain PEM key left by an older version is sealed in
 * place at first use; a sealed key that no longer opens (the vault's key changed) is replaced by a
 * new CA, which hands get at their next provisioning.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { SYSTEM_BUNDLES, type CaFiles } from '../hands/hand-env';
import { SealError } from './crypto';
import { makeCa, makeLeafKey, mintServerCert, type KeyAndCert } from './x509';

/** Seals the CA's key with the vault's key (VaultState.sealOwn/openOwn). */
export interface CaSealer {
  sealOwn(plaintext: Buffer | string, aad: string): Promise<Buffer>;
  openOwn(sealed: Buffer, aad: string): Promise<Buffer>;
}

/** What the sealed key is, authenticated with it (a sealed value moved elsewhere does not open). */
const KEY_AAD = 'corral:egress-ca.key';

export class EgressCa {
  private loaded?: Promise<{ ca: KeyAndCert; leaf: { keyPem: string; spki: Buffer } }>;
  private local?: Promise<CaFiles>;
  private readonly contexts = new Map<string, Promise<tls.SecureContext>>();

  /** Without a sealer (a proxy built alone, in tests) the key is kept as plain PEM. */
  constructor(
    private readonly dataDir: string,
    private readonly sealer?: CaSealer,
  ) {}

  /** The CA certificate (PEM) a hand must trust. */
  async certPem(): Promise<string> {
    return (await this.load()).ca.certPem;
  }

  /** Where the CA certificate is on this machine (a local hand without a sandbox reads it there). */
  get certPath(): string {
    return path.join(this.dataDir, 'egress-ca.pem');
  }

  /**
   * The CA and a bundle (this machine's system roots, else Node's, plus the CA) as files on this
   * machine, for local hands, which run here.
   */
  localFiles(): Promise<CaFiles> {
    this.local ??= (async () => {
      const pem = await this.certPem();
      let roots: string | undefined;
      for (const b of SYSTEM_BUNDLES) {
        roots = await fsp.readFile(b, 'utf8').catch(() => undefined);
        if (roots) break;
      }
      const bundleFile = path.join(this.dataDir, 'egress-ca-bundle.pem');
      await fsp.writeFile(bundleFile, `${roots ?? tls.rootCertificates.join('\n')}\n${pem}`, { mode: 0o644 });
      return { caFile: this.certPath, bundleFile };
    })();
    this.local.catch(() => (this.local = undefined));
    return this.local;
  }

  /** A TLS context presenting a certificate for `host` (a DNS name or an IP address). */
  contextFor(host: string): Promise<tls.SecureContext> {
    let ctx = this.contexts.get(host);
    if (!ctx) {
      ctx = this.load().then(async ({ ca, leaf }) => tls.createSecureContext({ key: leaf.keyPem, cert: await mintServerCert(ca, leaf.spki, host) }));
      this.contexts.set(host, ctx);
      ctx.catch(() => this.contexts.delete(host));
    }
    return ctx;
  }

  private load() {
    this.loaded ??= (async () => {
      const ca = await this.readOrMake();
      return { ca, leaf: await makeLeafKey() };
    })();
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }

  private async readOrMake(): Promise<KeyAndCert> {
    const keyFile = path.join(this.dataDir, 'egress-ca.key');
    try {
      const [stored, certPem] = await Promise.all([fsp.readFile(keyFile), fsp.readFile(this.certPath, 'utf8')]);
      const plain = stored.subarray(0, 10).toString('latin1') === '-----BEGIN';
      if (plain) {
        const keyPem = stored.toString('utf8');
        if (this.sealer) await this.writeKey(keyFile, keyPem);
        return { keyPem, certPem };
      }
      if (!this.sealer) throw new Error(`${keyFile} is sealed with the vault's key, which this proxy was not given`);
      try {
        return { keyPem: (await this.sealer.openOwn(stored, KEY_AAD)).toString('utf8'), certPem };
      } catch (err) {
        if (!(err instanceof SealError)) throw err;
        console.warn(`corral: ${keyFile} does not open with the vault's key (it changed?): a new egress CA is made`);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const made = await makeCa(`Corral egress proxy CA (${new Date().toISOString().slice(0, 10)})`);
    await fsp.mkdir(this.dataDir, { recursive: true, mode: 0o700 });
    // The certificate first: a key without its certificate would be made again next time anyway.
    await fsp.writeFile(this.certPath, made.certPem, { mode: 0o644 });
    await this.writeKey(keyFile, made.keyPem);
    return made;
  }

  /** Writes the key (sealed when there is a sealer) beside the file and renames it over, so a crash leaves one whole file. */
  private async writeKey(keyFile: string, keyPem: string): Promise<void> {
    const bytes = this.sealer ? await this.sealer.sealOwn(keyPem, KEY_AAD) : Buffer.from(keyPem);
    const tmp = `${keyFile}.${process.pid}.tmp`;
    await fsp.writeFile(tmp, bytes, { mode: 0o600 });
    await fsp.rename(tmp, keyFile);
  }
}
