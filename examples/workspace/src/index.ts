import { loadTeam, loadUser } from "./api/users";

var started = Date.now();
console.log("starting");
loadUser("42").then(() => loadTeam("7"));
