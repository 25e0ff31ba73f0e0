import { useState, type FormEvent } from 'react';
import type { CorralApi, UiEnvironment } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { ErrorNote } from '../ErrorNote';

type Kind = 'local' | 'ssh' | 'docker' | 'adb' | 'self_hosted';
type Field = { key: string; label: string; number?: boolean; options?: string[]; required?: boolean };

/** The settings of each kind (the API's environment config; secrets never go here). */
const FIELDS: Record<Kind, Field[]> = {
  local: [{ key: 'working_dir', label: 'Work folder (default: a new folder per session)' }],
  ssh: [
    { key: 'host', label: 'Host', required: true },
    { key: 'port', label: 'Port', number: true },
    { key: 'user', label: 'User' },
    { key: 'ssh_config_host', label: '~/.ssh/config alias' },
    { key: 'identity_file', label: 'Private key file (path on this machine)' },
    { key: 'working_dir', label: 'Work folder' },
  ],
  docker: [
    { key: 'image', label: 'Image', required: true },
    { key: 'network', label: 'Network', options: ['', 'none', 'bridge', 'host'] },
    { key: 'memory_mb', label: 'Memory (MB)', number: true },
    { key: 'cpus', label: 'CPUs', number: true },
    { key: 'docker_host', label: 'Docker host (default: DOCKER_HOST or the usual sockets)' },
    { key: 'working_dir', label: 'Work folder' },
  ],
  adb: [
    { key: 'serial', label: 'Device serial', required: true },
    { key: 'adb_host', label: 'adb server host' },
    { key: 'adb_port', label: 'adb server port', number: true },
    { key: 'working_dir', label: 'Work folder' },
  ],
  // The machine dials in with a worker key (made below the form once the environment exists).
  self_hosted: [],
};

/** An environment's name, description, kind and the kind's settings; the kind is fixed once made. */
export function EnvironmentForm({ api, environment, onSaved, justSaved = false }: { api: CorralApi; environment: UiEnvironment | null; onSaved(e: UiEnvironment): void; justSaved?: boolean }) {
  const [name, setName] = useState(environment?.name ?? '');
  const [description, setDescription] = useState(environment?.description ?? '');
  const [kind, setKind] = useState<Kind>((environment?.config.type as Kind) ?? 'local');
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(environment?.config ?? {}).filter(([k]) => k !== 'type').map(([k, v]) => [k, String(v)])),
  );
  const [error, setError] = useState<ClientError | null>(null);
  const [saved, setSaved] = useState(justSaved);
  const known = (FIELDS as Record<string, Field[] | undefined>)[kind];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    // Settings the form does not show (env, sandbox, networking, a credential) are kept as they are.
    const config: Record<string, unknown> = environment ? { ...environment.config, type: kind } : { type: kind };
    for (const f of known ?? []) {
      const v = values[f.key]?.trim();
      if (v) config[f.key] = f.number ? Number(v) : v;
      else delete config[f.key];
    }
    try {
      const body = { name, description: description || null, config: config as never };
      const out = environment ? await api.updateEnvironment({ environmentId: environment.id, update: body }) : await api.createEnvironment(body);
      setSaved(true);
      onSaved(out);
    } catch (err) {
      setError(toClientError(err));
    }
  };

  return (
    <form className="catalog-form" onSubmit={(e) => void submit(e)} aria-label={environment ? `Environment ${environment.name}` : 'New environment'} data-testid="environment-form">
      <h3>{environment ? environment.name : 'New environment'}</h3>
      <label className="field">
        <span>Name</span>
        <input value={name} onChange={(e) => setName(e.target.value)} required />
      </label>
      <label className="field">
        <span>Description</span>
        <input value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <label className="field">
        <span>Kind</span>
        <select value={kind} onChange={(e) => setKind(e.target.value as Kind)} disabled={environment !== null}>
          <option value="local">local (this machine)</option>
          <option value="ssh">ssh (a host)</option>
          <option value="docker">docker (a container)</option>
          <option value="adb">adb (an Android device)</option>
          <option value="self_hosted">self_hosted (a machine that dials in)</option>
        </select>
      </label>
      {!known && <p className="muted">This environment's kind ({kind}) has no settings here.</p>}
      {known?.map((f) => (
        <label key={f.key} className="field">
          <span>{f.label}</span>
          {f.options ? (
            <select value={values[f.key] ?? ''} onChange={(e) => setValues({ ...values, [f.key]: e.target.value })}>
              {f.options.map((o) => (
                <option key={o} value={o}>
                  {o || 'default'}
                </option>
              ))}
            </select>
          ) : (
            <input value={values[f.key] ?? ''} inputMode={f.number ? 'decimal' : undefined} required={f.required} onChange={(e) => setValues({ ...values, [f.key]: e.target.value })} />
          )}
        </label>
      ))}
      {error && <ErrorNote error={error} />}
      <div className="form-actions">
        <button type="submit" className="primary">
          {environment ? 'Save' : 'Create environment'}
        </button>
        {saved && <span role="status">Saved.</span>}
      </div>
    </form>
  );
}
