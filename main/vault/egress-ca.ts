/**
 * The egress proxy's certificate authority: one per host install, made on first use and kept in
 * the data folder (`egress-ca.key`, 0600, never leaves the host; `egress-ca.pem`, the public
 * certificate hands are given to trust). It mints a server certificate for each allowed host the
 * proxy terminates TLS for, cached for the life of the process.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { SYSTEM_BUNDLES, type CaFiles } from '../hands/hand-env';
import { makeCa, makeLeafKey, mintServerCert, type KeyAndCert } from './x509';

export class EgressCa {
  private loaded?: Promise<{ ca: KeyAndCert; leaf: { keyPem: string; spki: Buffer } }>;
  private local?: Promise<CaFiles>;
  private readonly contexts = new Map<string, Promise<tls.SecureContext>>();

  constructor(private readonly dataDir: string) {}

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
      return { keyPem: await fsp.readFile(keyFile, 'utf8'), certPem: await fsp.readFile(this.certPath, 'utf8') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const made = await makeCa(`Corral egress proxy CA (${new Date().toISOString().slice(0, 10)})`);
    await fsp.mkdir(this.dataDir, { recursive: true, mode: 0o700 });
    // The certificate first: a key without its certificate would be made again next time anyway.
    await fsp.writeFile(this.certPath, made.certPem, { mode: 0o644 });
    await fsp.writeFile(keyFile, made.keyPem, { mode: 0o600 });
    return made;
  }
}
