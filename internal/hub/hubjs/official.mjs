// The official JavaScript Hub client (@huggingface/hub, pinned in
// package.json) driven against a Hub at a URL, for the Go test beside it.
// It only calls the client's public functions, as any user of the client
// would, and prints what it got as JSON; the Go test judges the result.
//
//   node official.mjs push HUB_URL OWNER/NAME DIR VISIBILITY   create the dataset repo ("-": the
//                                                          namespace's default), commit every file of DIR
//   node official.mjs download HUB_URL OWNER/NAME REV DIR   every file of REV into DIR
//
// The token comes from HF_TOKEN (never from the command line).
import { openAsBlob } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import {
	commit,
	createRepo,
	datasetInfo,
	downloadFile,
	fileDownloadInfo,
	listFiles,
	whoAmI,
} from "@huggingface/hub";

const accessToken = process.env.HF_TOKEN;
const [command, hubUrl, name, ...rest] = process.argv.slice(2);
const repo = { type: "dataset", name };

async function filesUnder(dir) {
	const out = [];
	for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
		if (entry.isFile()) {
			const full = join(entry.parentPath ?? entry.path, entry.name);
			out.push(relative(dir, full).split(sep).join("/"));
		}
	}
	return out.sort();
}

// push: whoAmI, createRepo (with the visibility asked, else none: the
// namespace's default stands), then one commit of every file: regular files
// inline, LFS files through the batch API (basic or multipart, as the Hub
// answers).
async function push([dir, visibility]) {
	const me = await whoAmI({ accessToken, hubUrl });
	const created = await createRepo({
		repo,
		accessToken,
		hubUrl,
		...(visibility === "-" ? {} : { visibility }),
	});
	const operations = [];
	for (const path of await filesUnder(dir)) {
		operations.push({ operation: "addOrUpdate", path, content: await openAsBlob(join(dir, path)) });
	}
	const out = await commit({ repo, accessToken, hubUrl, title: "Upload from the official client", operations });
	return { user: me.name, repoUrl: created.repoUrl, commit: out.commit.oid };
}

// download: datasetInfo of REV (HEAD when REV is "-") pins the commit,
// listFiles (recursive, following the Link header's pages) lists it, and
// each file is probed (fileDownloadInfo: Range bytes=0-0) then fetched
// (downloadFile), both following the Hub's redirects as fetch does.
async function download([rev, dir]) {
	const info = await datasetInfo({
		name,
		accessToken,
		hubUrl,
		additionalFields: ["sha"],
		...(rev === "-" ? {} : { revision: rev }),
	});
	const files = [];
	for await (const entry of listFiles({ repo, recursive: true, revision: info.sha, accessToken, hubUrl })) {
		if (entry.type !== "file") {
			continue;
		}
		const probe = await fileDownloadInfo({ repo, path: entry.path, revision: info.sha, accessToken, hubUrl });
		const blob = await downloadFile({ repo, path: entry.path, revision: info.sha, accessToken, hubUrl, xet: false });
		const data = new Uint8Array(await blob.arrayBuffer());
		const target = join(dir, ...entry.path.split("/"));
		await mkdir(dirname(target), { recursive: true });
		await writeFile(target, data);
		files.push({ path: entry.path, size: entry.size, lfs: entry.lfs?.oid ?? null, probedSize: probe.size, etag: probe.etag });
	}
	return { sha: info.sha, files };
}

const commands = { push, download };
if (!commands[command]) {
	console.error(`usage: node official.mjs push|download HUB_URL OWNER/NAME ...`);
	process.exit(2);
}
try {
	console.log(JSON.stringify(await commands[command](rest)));
} catch (err) {
	// The client's HubApiError carries the status and the Hub's message.
	console.error(`${command}: ${err.statusCode ?? ""} ${err.message}`);
	process.exit(1);
}
