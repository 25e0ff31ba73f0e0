import type { CorralApi } from '../../../../main/api/ui/contract';
import { toClientError } from '../../api/errors';
import { loadCatalog } from '../../state/catalog';
import { say, useHandsPanel } from '../../state/hands-panel';
import { pickHost } from '../../lib/hand-drops';

/** What this machine offers: ~/.ssh/config hosts (to the form), engines' images and adb devices (attached at once). */
export function DiscoveryList({ api }: { api: CorralApi }) {
  const found = useHandsPanel((s) => s.discovery);
  const busy = useHandsPanel((s) => s.busy);
  const discover = async () => {
    useHandsPanel.setState({ busy: true });
    try {
      useHandsPanel.setState({ discovery: await api.discoverMachines({}) });
    } catch (err) {
      say('error', toClientError(err).message);
    } finally {
      useHandsPanel.setState({ busy: false });
    }
  };
  const attach = async (name: string, machine: Parameters<CorralApi['attachMachine']>[0]['machine']) => {
    try {
      const env = await api.attachMachine({ name, machine });
      say('ok', `Attached ${env.name}`);
      await loadCatalog(api);
    } catch (err) {
      say('error', toClientError(err).message);
    }
  };
  return (
    <section className="discovery" aria-label="Found on this machine">
      <h3>
        Found on this machine{' '}
        <button type="button" onClick={() => void discover()} disabled={busy}>
          {found ? 'Look again' : 'Look'}
        </button>
      </h3>
      {found && (
        <ul>
          {found.ssh_hosts.map((h) => (
            <li key={`ssh-${h.alias}`}>
              <span className="kind kind-ssh">ssh</span> {h.alias} ({h.user}@{h.host}:{h.port}){' '}
              <button type="button" onClick={() => pickHost(h)}>
                Attach…
              </button>
            </li>
          ))}
          {found.engines.map((e) =>
            e.reachable ? (
              e.images.map((img) => (
                <li key={`${e.endpoint}-${img}`}>
                  <span className={`kind kind-docker`}>{e.kind}</span> {img} on {e.endpoint}{' '}
                  <button type="button" aria-label={`Attach ${img}`} onClick={() => void attach(img.replace(/:latest$/, '').split('/').pop()!, { type: 'docker', image: img, docker_host: e.endpoint })}>
                    Attach
                  </button>
                </li>
              ))
            ) : (
              <li key={e.endpoint} className="unreachable">
                {e.kind} at {e.endpoint}: {e.error}
              </li>
            ),
          )}
          {found.adb.devices.map((d) => (
            <li key={`adb-${d.serial}`}>
              <span className="kind kind-adb">adb</span> {d.model ?? d.serial} ({d.serial}, {d.state}){' '}
              <button type="button" disabled={d.state !== 'device'} onClick={() => void attach(d.model ?? d.serial, { type: 'adb', serial: d.serial })} aria-label={`Attach ${d.serial}`}>
                Attach
              </button>
            </li>
          ))}
          {found.adb.error && <li className="unreachable">adb: {found.adb.error}</li>}
          {!found.ssh_hosts.length && !found.engines.length && !found.adb.devices.length && <li className="empty">Nothing found.</li>}
        </ul>
      )}
    </section>
  );
}
