// Training that Python can watch and interrupt: the fit runs on a worker thread while the calling thread
// (the GIL released) waits, runs the per-iteration callback in Python, and every 50 ms lets the
// interpreter run its signal handlers. Ctrl-C therefore raises KeyboardInterrupt at once; the worker
// sees the stop flag at its next poll (between tree layers) and returns the iterations it finished.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "rebelboost/train.hpp"

namespace rebelboost::bindings {

namespace py = pybind11;

struct Interruptible {
  TrainResult result;
  py::object error;  // the Python exception that stopped training (Ctrl-C, or raised by the callback), or None
};

// Runs fit(callback, stop) on a worker thread. `on_iteration` (may be empty) runs in this thread with the
// GIL held, once per iteration; it returns false to stop. Exceptions of fit are rethrown here (GIL held).
// Must be called with the GIL held.
inline Interruptible run_interruptible(
    const std::function<TrainResult(const IterationCallback&, const std::atomic<bool>*)>& fit,
    const std::function<bool(const IterationInfo&)>& on_iteration) {
  std::mutex mutex;
  std::condition_variable cv;
  const IterationInfo* pending = nullptr;  // an iteration waiting for on_iteration
  bool answered = false, answer = true, done = false;
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  Interruptible out;
  out.error = py::none();

  IterationCallback relay;
  if (on_iteration) {
    relay = [&](const IterationInfo& info) {  // worker thread: hand the iteration over and wait
      std::unique_lock<std::mutex> lock(mutex);
      pending = &info;
      answered = false;
      cv.notify_all();
      cv.wait(lock, [&] { return answered; });
      return answer;
    };
  }
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        out.result = fit(relay, &stop);
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mutex);
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done || pending != nullptr; });
      if (done) break;
      const IterationInfo* info = pending;  // null: a timeout, time to check for signals
      lock.unlock();
      bool go_on = true;
      {
        py::gil_scoped_acquire acquire;
        try {
          if (info != nullptr && out.error.is_none()) go_on = on_iteration(*info);
          if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        } catch (py::error_already_set& e) {
          if (out.error.is_none()) out.error = e.value();
        } catch (const std::exception& e) {  // e.g. a cast of the callback's answer
          if (out.error.is_none()) out.error = py::reinterpret_steal<py::object>(PyObject_CallFunction(PyExc_RuntimeError, "s", e.what()));
        }
        if (!out.error.is_none()) {
          go_on = false;
          stop.store(true, std::memory_order_relaxed);
        }
      }
      lock.lock();
      if (info != nullptr) {
        pending = nullptr;
        answer = go_on;
        answered = true;
        cv.notify_all();
      }
    }
    lock.unlock();
    worker.join();
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace rebelboost::bindings
