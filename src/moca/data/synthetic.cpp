#include "moca/data/synthetic.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/data/hapt.hpp"
#include "moca/data/windowing.hpp"

namespace moca::data {

void SyntheticOptions::validate() const {
  const std::string f = "SyntheticOptions::validate(): ";
  if (windows < 1) {
    throw_invalid("", f + "windows (" + std::to_string(windows) + ") must be >= 1");
  }
  if (length < 8) {
    throw_invalid("", f + "length (" + std::to_string(length) + ") must be >= 8");
  }
  if (!(sample_rate_hz > 0.0 && sample_rate_hz <= 10000.0)) {
    throw_invalid(
        "", f + "sample_rate_hz (" + std::to_string(sample_rate_hz) + ") must be in (0, 10000]");
  }
  if (!(coupling >= 0.0 && coupling <= 1.0)) {
    throw_invalid("", f + "coupling (" + std::to_string(coupling) + ") must be in [0, 1]");
  }
  if (!(noise >= 0.0 && std::isfinite(noise))) {
    throw_invalid("", f + "noise (" + std::to_string(noise) + ") must be finite and >= 0");
  }
  if (subjects < 1) {
    throw_invalid("", f + "subjects (" + std::to_string(subjects) + ") must be >= 1");
  }
}

namespace {

using Vec3 = std::array<double, 3>;

Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
Vec3 scale(const Vec3& a, double s) {
  return {a[0] * s, a[1] * s, a[2] * s};
}
Vec3 add(const Vec3& a, const Vec3& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
Vec3 normalized(const Vec3& a) {
  return scale(a, 1.0 / std::sqrt(dot(a, a)));
}

// Rodrigues: v rotated by the rotation vector r (axis r/|r|, angle |r|).
Vec3 rotate(const Vec3& v, const Vec3& r) {
  const double th = std::sqrt(dot(r, r));
  if (th < 1e-12) return add(v, cross(r, v));
  const Vec3 k = scale(r, 1.0 / th);
  const double c = std::cos(th), s = std::sin(th);
  return add(add(scale(v, c), scale(cross(k, v), s)), scale(k, dot(k, v) * (1.0 - c)));
}

// A unit phasor (sin, cos of phase) advanced by a fixed angle per step.
struct Osc {
  double s = 0, c = 1, ds = 0, dc = 1;
  Osc() = default;
  Osc(double step_angle, double phase)
      : s(std::sin(phase)),
        c(std::cos(phase)),
        ds(std::sin(step_angle)),
        dc(std::cos(step_angle)) {}
  void step() {
    const double ns = s * dc + c * ds;
    c = c * dc - s * ds;
    s = ns;
  }
};

double uniform(Rng& rng, double lo, double hi) {
  return lo + (hi - lo) * uniform01(rng);
}

// Fills out[0..m) with independent N(0, 1) values, two per Box-Muller draw (same transform as
// moca::standard_normal, using both the cosine and the sine branch).
void fill_normal(Rng& rng, double* out, size_t m) {
  for (size_t j = 0; j < m; j += 2) {
    double u1 = uniform01(rng);
    while (u1 <= 0.0) u1 = uniform01(rng);
    const double u2 = uniform01(rng);
    const double r = std::sqrt(-2.0 * std::log(u1));
    out[j] = r * std::cos(2.0 * M_PI * u2);
    if (j + 1 < m) out[j + 1] = r * std::sin(2.0 * M_PI * u2);
  }
}

// Gravity direction in the sensor frame per posture (waist phone, HAPT-like: x up when upright).
const Vec3 kUpright = normalized({0.95, -0.15, 0.25});
const Vec3 kSitting = normalized({0.70, -0.10, 0.70});
const Vec3 kLaying = normalized({0.05, 0.30, 0.95});

Vec3 posture_gravity(int cls) {
  if (cls == 4) return kSitting;
  if (cls == 6) return kLaying;
  return kUpright;  // standing, walking, stairs
}

// Subject mount tilt: a fixed small rotation vector per subject (its own seeded stream).
Vec3 subject_tilt(std::uint64_t seed, int subject) {
  Rng rng(derive_seed(seed, 0x5B1EC7ULL + static_cast<std::uint64_t>(subject)));
  return {0.08 * standard_normal(rng), 0.08 * standard_normal(rng), 0.08 * standard_normal(rng)};
}

// The random parameters of one latent motion M of class `cls` (drawn by draw_motion()).
struct Motion {
  Vec3 mount{};                   // subject tilt + window orientation jitter
  Vec3 sway_amp{}, sway_phase{};  // postural sway (all classes) at sway_f Hz
  double sway_f = 0;
  double step_f = 0, bounce = 0;  // gait (classes 1-3)
  std::array<double, 3> harm_phase{};
  Vec3 rot_amp{}, rot_phase{};
  Vec3 u_a{}, n_axis{};  // transition (class 0): posture A -> B, by alpha about n_axis
  double alpha = 0, t_c = 0, dur = 1;
};

// Draws M's parameters from `rng` (the order of the draws is part of the generator's output).
Motion draw_motion(int cls, const Vec3& tilt, Rng& rng, int len, double fs) {
  const double two_pi = 2.0 * M_PI;
  Motion m;
  // Window orientation jitter on top of the subject mount tilt.
  const Vec3 jitter = {0.05 * standard_normal(rng), 0.05 * standard_normal(rng),
                       0.05 * standard_normal(rng)};
  m.mount = add(tilt, jitter);
  // Postural sway (all classes): theta_s(t) = a_s (.) sin(2 pi f_s t + phi_s).
  for (int k = 0; k < 3; ++k) {
    m.sway_amp[k] = uniform(rng, 0.005, 0.03);
    m.sway_phase[k] = uniform(rng, 0.0, two_pi);
  }
  m.sway_f = uniform(rng, 0.2, 0.6);
  // Gait parameters (classes 1-3).
  if (cls >= 1 && cls <= 3) {
    const double f_lo[] = {0, 1.7, 1.4, 1.9}, f_hi[] = {0, 2.0, 1.7, 2.3};
    const double amp[] = {0, 0.25, 0.20, 0.40};
    m.step_f = uniform(rng, f_lo[cls], f_hi[cls]);
    m.bounce = amp[cls] * uniform(rng, 0.8, 1.2);
    for (auto& p : m.harm_phase) p = uniform(rng, 0.0, two_pi);
    m.rot_amp = {uniform(rng, 0.05, 0.10), uniform(rng, 0.04, 0.08), uniform(rng, 0.03, 0.06)};
    m.rot_phase = {uniform(rng, 0.0, two_pi), uniform(rng, 0.0, two_pi), m.harm_phase[0]};
    if (cls == 3) m.rot_amp = scale(m.rot_amp, 1.3);
  }
  // Transition parameters (class 0): posture A -> B, smooth cosine ramp.
  m.u_a = posture_gravity(cls);
  if (cls == 0) {
    const int postures[3] = {5, 4, 6};
    const int pair = static_cast<int>(uniform_int(rng, 0, 5));  // 6 ordered pairs, as in HAPT
    const int a = pair / 2, b = (a + 1 + pair % 2) % 3;
    m.u_a = posture_gravity(postures[a]);
    const Vec3 u_b = posture_gravity(postures[b]);
    m.alpha = std::acos(std::max(-1.0, std::min(1.0, dot(m.u_a, u_b))));
    m.n_axis = normalized(cross(m.u_a, u_b));
    const double span = len / fs;
    m.t_c = uniform(rng, 0.35, 0.65) * span;
    m.dur = uniform(rng, 1.5, 3.0);
  }
  return m;
}

// The gait of classes 1-3 sample by sample: body acceleration and pelvis rotation. Sinusoids
// advance by phasor recurrences (one rotation per sample) instead of sin/cos calls.
struct Gait {
  Vec3 u0, fwd, lat;  // gait frame: vertical, forward, lateral
  double bounce, w1;
  Vec3 rot_amp;
  // Harmonics h = 1..3 of the step (h1 also drives forward acc and pitch), stride-rate lateral
  // acc, stride-rate yaw and roll.
  Osc h1, h2, h3, side, yaw, roll;

  Gait(const Motion& m, const Vec3& u0_, const Vec3& fwd_, const Vec3& lat_, double fs)
      : u0(u0_),
        fwd(fwd_),
        lat(lat_),
        bounce(m.bounce),
        w1(2.0 * M_PI * m.step_f),
        rot_amp(m.rot_amp),
        h1(w1 / fs, m.harm_phase[0]),
        h2(2 * w1 / fs, m.harm_phase[1]),
        h3(3 * w1 / fs, m.harm_phase[2]),
        side(0.5 * w1 / fs, m.harm_phase[1]),
        yaw(0.5 * w1 / fs, m.rot_phase[0]),
        roll(0.5 * w1 / fs, m.rot_phase[1]) {}

  // This sample's body acceleration; adds the pelvis rotation to theta, dtheta; steps.
  Vec3 sample(Vec3& theta, Vec3& dtheta) {
    // Body acc: v = sin(ph1) + 0.5 sin(ph2) + 0.25 sin(ph3) along vertical, 0.5 sin(ph1 + pi/2)
    // forward, 0.3 sin(stride phase) sideways.
    const double v = h1.s + 0.5 * h2.s + 0.25 * h3.s;
    const double f = 0.5 * h1.c;
    const double l = 0.3 * side.s;
    const Vec3 body =
        add(add(scale(u0, bounce * v), scale(fwd, bounce * f)), scale(lat, bounce * l));
    // Pelvis rotation: yaw (about vertical) and roll (about forward) at stride frequency,
    // pitch (about lateral) at step frequency locked to the bounce phase; 2nd harmonic 0.3x:
    // angle B (sin ph + 0.3 sin 2ph), rate B w (cos ph + 0.6 cos 2ph).
    const Osc* osc[3] = {&yaw, &roll, &h1};
    const double fr[3] = {0.5 * w1, 0.5 * w1, w1};
    const Vec3 axes[3] = {u0, fwd, lat};
    for (int k = 0; k < 3; ++k) {
      const double sn = osc[k]->s, cs = osc[k]->c;
      const double ang = rot_amp[k] * (sn + 0.6 * sn * cs);
      const double rate = rot_amp[k] * fr[k] * (cs + 0.6 * (cs * cs - sn * sn));
      theta = add(theta, scale(axes[k], ang));
      dtheta = add(dtheta, scale(axes[k], rate));
    }
    h1.step();
    h2.step();
    h3.step();
    side.step();
    yaw.step();
    roll.step();
    return body;
  }
};

// One latent motion M of class `cls`: writes a(t) (3 x L, gravity + body acc, in g) and the
// angular velocity w(t) (3 x L, rad/s) of that same motion. See docs/data.md for the equations.
void simulate_motion(int cls, const Vec3& tilt, Rng& rng, int len, double fs, double* acc,
                     double* gyro) {
  const double two_pi = 2.0 * M_PI;
  const Motion m = draw_motion(cls, tilt, rng, len, fs);
  const Vec3 u0 = rotate(m.u_a, m.mount);
  // Gait frame: vertical = u0, forward = sensor z made orthogonal to u0, lateral = their cross.
  Vec3 fwd = add({0, 0, 1}, scale(u0, -u0[2]));
  fwd = normalized(fwd);
  const Vec3 lat = cross(u0, fwd);
  const Vec3 rn = rotate(m.n_axis, m.mount);
  std::array<Osc, 3> sway;  // each Osc holds sin and cos of its phase at sample j
  for (int k = 0; k < 3; ++k)
    sway[static_cast<size_t>(k)] = Osc(two_pi * m.sway_f / fs, m.sway_phase[k]);
  Gait gait(m, u0, fwd, lat, fs);
  const bool walking = cls >= 1 && cls <= 3;
  for (int j = 0; j < len; ++j) {
    const double t = j / fs;
    Vec3 theta, dtheta;  // small-angle rotation vector and its time derivative
    for (int k = 0; k < 3; ++k) {
      const Osc& o = sway[static_cast<size_t>(k)];
      theta[k] = m.sway_amp[k] * o.s;
      dtheta[k] = m.sway_amp[k] * two_pi * m.sway_f * o.c;
    }
    Vec3 body{0, 0, 0};
    Vec3 u = u0;
    if (walking) {
      body = gait.sample(theta, dtheta);
    } else if (cls == 0) {
      // s(tau) = (1 - cos(pi tau)) / 2 on tau in [0, 1], tau = (t - t_c) / dur + 1/2.
      const double tau = (t - m.t_c) / m.dur + 0.5;
      double s = 0, ds = 0;
      if (tau >= 1.0) {
        s = 1.0;
      } else if (tau > 0.0) {
        s = 0.5 - 0.5 * std::cos(M_PI * tau);
        ds = 0.5 * M_PI * std::sin(M_PI * tau) / m.dur;
        body = scale(u0, 0.15 * std::sin(M_PI * tau));
      }
      u = rotate(u0, scale(rn, m.alpha * s));
      dtheta = add(dtheta, scale(rn, m.alpha * ds));
    }
    for (auto& o : sway) o.step();
    const Vec3 g = rotate(u, theta);
    for (int k = 0; k < 3; ++k) {
      acc[k * len + j] = g[k] + body[k];
      gyro[k * len + j] = -dtheta[k];  // du/dt = -w x u for a body turning at w (sensor frame)
    }
  }
}

}  // namespace

Windows generate_synthetic(const SyntheticOptions& o) {
  o.validate();
  const int n = o.windows, len = o.length;
  Windows w;
  w.channels = kHaptChannels;
  w.length = len;
  w.sample_rate_hz = o.sample_rate_hz;
  w.channel_names = hapt_channel_names();
  w.class_names = har_class_names();
  w.x.resize(n, static_cast<Eigen::Index>(kHaptChannels) * len);
  w.labels.resize(n);
  w.subjects.resize(n);
  std::vector<int> classes(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) classes[static_cast<size_t>(i)] = i % 7;
  {
    Rng rng(derive_seed(o.seed, 0xC1A55ULL));
    shuffle(classes, rng);
  }
  std::vector<Vec3> tilts(static_cast<size_t>(o.subjects));
  for (int s = 0; s < o.subjects; ++s) tilts[static_cast<size_t>(s)] = subject_tilt(o.seed, s);
  const double a = std::sqrt(o.coupling), b = std::sqrt(1.0 - o.coupling);
#pragma omp parallel
  {
    std::vector<double> acc(3 * static_cast<size_t>(len)), gyro(acc.size()), acc2(acc.size()),
        gyro2(acc.size()), noise(2 * acc.size());
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) {
      const int cls = classes[static_cast<size_t>(i)];
      const int subject = i % o.subjects;
      const std::uint64_t base = derive_seed(o.seed, static_cast<std::uint64_t>(i) + 1);
      Rng rng(base);                      // latent motion M (drives acc, and gyro with weight a)
      Rng rng_ind(derive_seed(base, 1));  // independent latent motion M' (gyro, weight b)
      Rng rng_noise(derive_seed(base, 2));
      simulate_motion(cls, tilts[static_cast<size_t>(subject)], rng, len, o.sample_rate_hz,
                      acc.data(), gyro.data());
      const int cls2 = static_cast<int>(uniform_int(rng_ind, 0, 6));
      const int subj2 = static_cast<int>(uniform_int(rng_ind, 0, o.subjects - 1));
      simulate_motion(cls2, tilts[static_cast<size_t>(subj2)], rng_ind, len, o.sample_rate_hz,
                      acc2.data(), gyro2.data());
      float* row = w.x.row(i).data();
      const size_t m = 3 * static_cast<size_t>(len);
      fill_normal(rng_noise, noise.data(), 2 * m);
      for (size_t j = 0; j < m; ++j) row[j] = static_cast<float>(acc[j] + o.noise * noise[j]);
      for (size_t j = 0; j < m; ++j) {
        row[m + j] = static_cast<float>(a * gyro[j] + b * gyro2[j] + o.noise * noise[m + j]);
      }
      w.labels(i) = cls;
      w.subjects(i) = subject;
    }
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "synthetic IMU (moca built-in generator): %d windows x 6 channels x %d samples at "
                "%g Hz, coupling %g, noise %g, %d subjects, seed %llu",
                n, len, o.sample_rate_hz, o.coupling, o.noise, o.subjects,
                static_cast<unsigned long long>(o.seed));
  w.description = buf;
  return w;
}

}  // namespace moca::data
