export async function fetchJson(path: string) {
  const res = await fetch(path);
  if (!res.ok) {
    console.log("request failed", path, res.status);
    throw new Error(`HTTP ${res.status}`);
  }
  return res.json();
}
