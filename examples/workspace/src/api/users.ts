import { fetchJson } from "../util/http";

export async function loadUser(id: string) {
  console.log("loading user", id);
  const user = await fetchJson(`/users/${id}`);
  console.log("loaded", user.name);
  return user;
}

export async function loadTeam(id: string) {
  var members = await fetchJson(`/teams/${id}/members`);
  return members;
}
