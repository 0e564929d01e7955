// Fetches from the coordinator's JSON API with the credential this tab keeps
// (sessionStorage, as "Authorization: Bearer <token>"). Errors carry the
// API's message; a refused credential (401, 403) is an AuthError, which the
// views show beside the token box.
const KEY = 'perfgate.token';

export const token = () => sessionStorage.getItem(KEY) || '';
export function setToken(value) {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

export class AuthError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function call(path, init = {}) {
  const headers = { ...(init.headers || {}) };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const res = await fetch(`/api/v1/${path}`, { ...init, headers });
  const body = await res.json().catch(() => ({}));
  if (res.status === 401 || res.status === 403) throw new AuthError(res.status, body.error || `HTTP ${res.status}`);
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

export function get(path, params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''));
  return call(`${path}${q.toString() ? '?' + q : ''}`);
}

export function post(path, payload) {
  return call(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) });
}
