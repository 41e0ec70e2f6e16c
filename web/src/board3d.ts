// The 3D board (Three.js): stacked levels, domes, workers, clickable cells with the legal targets highlighted,
// animated moves and orbit controls. It draws only when something changes, so an idle page costs nothing.
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { type BoardScene, type BoardView, PLAYER_COLOURS } from "./board";

const LEVEL_SIZES = [0.92, 0.78, 0.62]; // widths of the level 1, 2 and 3 blocks
const LEVEL_HEIGHT = 0.24;
const BASE = 0.08; // the board tile's thickness
const ANIMATION_MS = 350;

const cellCentre = (cell: number) => new THREE.Vector3((cell % 5) - 2, 0, Math.floor(cell / 5) - 2);
const topOf = (level: number) => BASE + Math.min(level, 3) * LEVEL_HEIGHT;
/** The cell under a point of the board (a mesh's centre), or null off the board. */
function cellAt(point: THREE.Vector3): number | null {
  const column = Math.round(point.x) + 2, row = Math.round(point.z) + 2;
  return column >= 0 && column < 5 && row >= 0 && row < 5 ? row * 5 + column : null;
}
/** Is `object` drawn: it and every group above it visible? (A ray meets hidden meshes too.) */
function shown(object: THREE.Object3D | null): boolean {
  for (; object; object = object.parent) if (!object.visible) return false;
  return true;
}

/** A letter or digit that always faces the camera: the files and ranks around the board, as notation names them. */
function edgeLabel(text: string): THREE.Sprite {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 64;
  const pen = canvas.getContext("2d")!;
  pen.font = "bold 44px sans-serif";
  pen.textAlign = "center";
  pen.textBaseline = "middle";
  pen.lineWidth = 8;
  pen.strokeStyle = "#1d3b4f";
  pen.strokeText(text, 32, 34);
  pen.fillStyle = "#ffffff";
  pen.fillText(text, 32, 34);
  const texture = new THREE.CanvasTexture(canvas);
  texture.colorSpace = THREE.SRGBColorSpace;
  const label = new THREE.Sprite(new THREE.SpriteMaterial({ map: texture, transparent: true }));
  label.scale.setScalar(0.36);
  return label;
}

interface Tween { mesh: THREE.Object3D; from: THREE.Vector3; to: THREE.Vector3; start: number }

export class Board3D implements BoardView {
  private renderer: THREE.WebGLRenderer;
  private scene = new THREE.Scene();
  private camera: THREE.PerspectiveCamera;
  private controls: OrbitControls;
  private buildings = new THREE.Group();
  private marks = new THREE.Group();
  private workers: THREE.Group[][] = [[], []];
  private tiles: THREE.Mesh[] = [];
  private tweens: Tween[] = [];
  private lastHeights: number[] | null = null;
  private frame = 0;
  private observer: ResizeObserver;

  constructor(private container: HTMLElement, onClick: (cell: number) => void) {
    this.renderer = new THREE.WebGLRenderer({ antialias: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    container.appendChild(this.renderer.domElement);
    this.renderer.domElement.className = "board3d";
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.1, 100);
    this.camera.position.set(0, 9.1, 4.5);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.maxPolarAngle = Math.PI * 0.45;
    this.controls.minDistance = 4;
    this.controls.maxDistance = 16;
    this.controls.addEventListener("change", () => this.requestDraw());
    this.controls.saveState(); // the starting view, which resetView brings back
    this.scene.background = new THREE.Color("#bfe3f2");
    this.scene.add(new THREE.HemisphereLight("#ffffff", "#557755", 1.6));
    const sun = new THREE.DirectionalLight("#ffffff", 1.6);
    sun.position.set(4, 8, 3);
    this.scene.add(sun, this.buildings, this.marks);
    this.addBoard();
    this.addWorkers();
    this.listenForClicks(onClick);
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(container);
    this.resize();
  }

  private addBoard() {
    const sea = new THREE.Mesh(new THREE.CylinderGeometry(5, 5, 0.05, 48), new THREE.MeshLambertMaterial({ color: "#4a90b8" }));
    sea.position.y = -0.06;
    this.scene.add(sea);
    for (let cell = 0; cell < 25; cell++) {
      const tile = new THREE.Mesh(new THREE.BoxGeometry(0.96, BASE, 0.96),
        new THREE.MeshLambertMaterial({ color: (cell + Math.floor(cell / 5)) % 2 ? "#8fbf6a" : "#9fcf78" }));
      tile.position.copy(cellCentre(cell)).setY(BASE / 2);
      this.tiles.push(tile);
      this.scene.add(tile);
    }
    // A5 is the far left corner (cell 0): files A-E along the near edge, ranks 5-1 from far to near on the left
    for (let i = 0; i < 5; i++) {
      const file = edgeLabel("ABCDE"[i]), rank = edgeLabel(String(5 - i));
      file.position.set(i - 2, 0.15, 2.8);
      rank.position.set(-2.8, 0.15, i - 2);
      this.scene.add(file, rank);
    }
  }

  private addWorkers() {
    for (let p = 0; p < 2; p++) {
      for (let w = 0; w < 2; w++) {
        const material = new THREE.MeshStandardMaterial({ color: PLAYER_COLOURS[p], roughness: 0.5 });
        const worker = new THREE.Group();
        const body = new THREE.Mesh(new THREE.CylinderGeometry(0.13, 0.19, 0.36, 20), material);
        body.position.y = 0.18;
        const head = new THREE.Mesh(new THREE.SphereGeometry(0.13, 20, 14), material);
        head.position.y = 0.46;
        const number = edgeLabel(String(w + 1)); // the worker's number, as the 2D board and the move tables name it
        number.position.y = 0.78;
        number.scale.setScalar(0.3);
        worker.add(body, head, number);
        worker.visible = false;
        this.workers[p].push(worker);
        this.scene.add(worker);
      }
    }
  }

  private listenForClicks(onClick: (cell: number) => void) {
    const raycaster = new THREE.Raycaster();
    let down = { x: 0, y: 0 };
    const canvas = this.renderer.domElement;
    canvas.addEventListener("pointerdown", (e) => (down = { x: e.clientX, y: e.clientY }));
    canvas.addEventListener("pointerup", (e) => {
      if (Math.hypot(e.clientX - down.x, e.clientY - down.y) > 5) return; // a drag turns the camera, not a click
      const rect = canvas.getBoundingClientRect();
      const pointer = new THREE.Vector2(((e.clientX - rect.left) / rect.width) * 2 - 1, -((e.clientY - rect.top) / rect.height) * 2 + 1);
      raycaster.setFromCamera(pointer, this.camera);
      // The nearest thing drawn under the pointer (a tile, a building, a mark or a worker) names the cell it stands
      // on. (An invisible column over each cell, as tall as a tower, would catch a click on the cells behind it.)
      const hit = raycaster.intersectObjects([...this.tiles, this.buildings, this.marks, ...this.workers.flat()], true)
        .find((h) => shown(h.object));
      const cell = hit ? cellAt(hit.object.getWorldPosition(new THREE.Vector3())) : null;
      if (cell !== null) onClick(cell);
    });
  }

  /** Where the middle of `cell`'s tile is drawn, in the page's pixels (for tests: a click there is a click on it). */
  screenPoint(cell: number): { x: number; y: number } {
    const point = cellCentre(cell).setY(BASE).project(this.camera);
    const rect = this.renderer.domElement.getBoundingClientRect();
    return { x: rect.left + ((point.x + 1) / 2) * rect.width, y: rect.top + ((1 - point.y) / 2) * rect.height };
  }

  private resize() {
    const width = this.container.clientWidth || 480;
    const height = Math.max(320, Math.min(width, window.innerHeight * 0.75));
    this.renderer.setSize(width, height);
    this.camera.aspect = width / height;
    this.camera.updateProjectionMatrix();
    this.requestDraw();
  }

  draw(scene: BoardScene) {
    this.drawBuildings(scene.heights);
    this.drawMarks(scene);
    scene.workers.forEach((cells, p) => this.workers[p].forEach((worker, w) => {
      const cell = cells[w];
      if (cell === undefined) { worker.visible = false; return; }
      const target = cellCentre(cell).setY(topOf(scene.heights[cell]));
      if (worker.visible && worker.position.distanceTo(target) > 1e-3) {
        this.tweens.push({ mesh: worker, from: worker.position.clone(), to: target, start: performance.now() });
      } else worker.position.copy(target);
      worker.visible = true;
    }));
    this.lastHeights = scene.heights.slice();
    this.requestDraw();
  }

  /** Empty `group`, giving back the GPU memory of its meshes: every draw makes new ones. */
  private clear(group: THREE.Group) {
    group.traverse((object) => {
      if (!(object instanceof THREE.Mesh)) return;
      object.geometry.dispose();
      (object.material as THREE.Material).dispose();
    });
    group.clear();
  }

  private drawBuildings(heights: number[]) {
    this.clear(this.buildings);
    const stone = new THREE.MeshLambertMaterial({ color: "#f4f1e8" });
    const domeMaterial = new THREE.MeshStandardMaterial({ color: "#1f4e99", roughness: 0.4 });
    heights.forEach((level, cell) => {
      const centre = cellCentre(cell);
      const grew = this.lastHeights !== null && level > this.lastHeights[cell];
      for (let l = 0; l < Math.min(level, 3); l++) {
        const block = new THREE.Mesh(new THREE.BoxGeometry(LEVEL_SIZES[l], LEVEL_HEIGHT * 0.96, LEVEL_SIZES[l]), stone);
        block.position.copy(centre).setY(BASE + (l + 0.5) * LEVEL_HEIGHT);
        if (grew && l === level - 1) this.growIn(block);
        this.buildings.add(block);
      }
      if (level === 4) {
        const dome = new THREE.Mesh(new THREE.SphereGeometry(0.27, 24, 12, 0, Math.PI * 2, 0, Math.PI / 2), domeMaterial);
        dome.position.copy(centre).setY(topOf(3));
        if (grew) this.growIn(dome);
        this.buildings.add(dome);
      }
    });
  }

  private growIn(mesh: THREE.Object3D) {
    const to = mesh.position.clone();
    this.tweens.push({ mesh, from: to.clone().setY(to.y + 1.2), to, start: performance.now() });
    mesh.position.y += 1.2;
  }

  private drawMarks(scene: BoardScene) {
    this.clear(this.marks);
    const ring = (cell: number, colour: string, radius: number, opacity = 0.85) => {
      const mesh = new THREE.Mesh(new THREE.RingGeometry(radius * 0.78, radius, 32),
        new THREE.MeshBasicMaterial({ color: colour, transparent: true, opacity, side: THREE.DoubleSide }));
      mesh.rotation.x = -Math.PI / 2;
      mesh.position.copy(cellCentre(cell)).setY(topOf(scene.heights[cell]) + 0.01);
      this.marks.add(mesh);
    };
    scene.targets.forEach((cell) => ring(cell, "#2ecc71", 0.44));
    scene.selected.forEach((cell) => ring(cell, "#f1c40f", 0.47));
    scene.hint.forEach((cell) => ring(cell, "#9b59b6", 0.36));
    scene.last.forEach((cell) => ring(cell, "#ffffff", 0.3, 0.7)); // what the last turn changed
    scene.overlay.forEach((share, cell) => {
      if (share < 0.01) return;
      const disc = new THREE.Mesh(new THREE.CircleGeometry(0.1 + 0.3 * Math.sqrt(share), 32),
        new THREE.MeshBasicMaterial({ color: scene.overlayKind === "visits" ? "#e67e22" : "#8e44ad", transparent: true, opacity: 0.55 }));
      disc.rotation.x = -Math.PI / 2;
      disc.position.copy(cellCentre(cell)).setY(topOf(scene.heights[cell]) + 0.02);
      this.marks.add(disc);
    });
  }

  private requestDraw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const time = performance.now();
      this.tweens = this.tweens.filter((t) => {
        const f = Math.min(1, (time - t.start) / ANIMATION_MS);
        const eased = f * f * (3 - 2 * f);
        t.mesh.position.lerpVectors(t.from, t.to, eased);
        t.mesh.position.y += Math.sin(Math.PI * f) * 0.5 * (t.from.distanceTo(t.to) > 0.5 ? 1 : 0);
        if (f >= 1) t.mesh.position.copy(t.to);
        return f < 1;
      });
      this.renderer.render(this.scene, this.camera);
      if (this.tweens.length) this.requestDraw();
    });
  }

  /** Back to the starting view, after the board was turned or zoomed. */
  resetView() { this.controls.reset(); this.camera.updateMatrixWorld(); } // clicks and screenPoint see it before the next frame

  dispose() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.observer.disconnect();
    this.controls.dispose();
    this.clear(this.buildings);
    this.clear(this.marks);
    this.renderer.dispose();
    this.renderer.forceContextLoss(); // the WebGL context now, not when the garbage collector gets to it
    this.renderer.domElement.remove();
  }
}
